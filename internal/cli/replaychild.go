package cli

import (
	"errors"
	"io"
	"os"

	"github.com/wirelab/wirelab/internal/querylog"
	"github.com/wirelab/wirelab/internal/replay"
)

// cmdReplayChild is the replayer inside the client host (replay.Run starts it). The
// command itself lives in the replay package, which writes its arguments too.
func cmdReplayChild(p *Process, args []string) error {
	fs := newFlagSet(p, "__replay", "internal: replay a query log onto a server (run inside the client host)",
		"ip netns exec wl-x-client wirelab __replay --log general.log --format mysql-general --engine mariadb --host 198.18.0.2 --port 3306 --user sbtest --password-file /run/wl/pw --db sbtest --speed max")
	c := replay.AddChildFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ctx, stop := untilInterrupt(p)
	defer stop()
	err := c.Run(ctx, openQueryLog, p.Stdout)
	if errors.Is(err, replay.ErrBadOptions) {
		return &UsageError{err}
	}
	return err
}

// openQueryLog opens a log for the replayer with querylog's reader of its format.
func openQueryLog(path string, f querylog.Format, skipBad bool) (querylog.Reader, io.Closer, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	l, err := querylog.Open(file, querylog.Options{Format: f, SkipBadLines: skipBad})
	if err != nil {
		file.Close()
		return nil, nil, err
	}
	return l, file, nil
}
