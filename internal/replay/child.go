package replay

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/querylog"
)

// ChildCommand is the command line of `wirelab __replay`, written by Options.Args and
// read here, so the cli only wires it in.
type ChildCommand struct {
	o                             Options
	engine, format, speed, pwFile string
}

// AddChildFlags registers the child's flags on fs.
func AddChildFlags(fs *flag.FlagSet) *ChildCommand {
	c := &ChildCommand{}
	t := &c.o.Target
	fs.StringVar(&c.o.Log, "log", "", "the query log to replay")
	fs.StringVar(&c.format, "format", "", "the log's format: "+formatList())
	fs.StringVar(&c.engine, "engine", "", "mariadb or postgres")
	fs.StringVar(&t.Host, "host", "", "the server's address")
	fs.IntVar(&t.Port, "port", 0, "the server's port (PostgreSQL: also names the socket file)")
	fs.StringVar(&t.Socket, "socket", "", "the server's unix socket (PostgreSQL: its directory); wins over --host")
	fs.StringVar(&t.User, "user", "", "user to log in as")
	fs.StringVar(&c.pwFile, "password-file", "", "file holding the password (never on the command line)")
	fs.StringVar(&t.DB, "db", "", "database every session uses")
	fs.BoolVar(&t.LogDB, "log-db", false, "use the database a session's Connect line names, where it names one")
	fs.BoolVar(&t.TLS, "tls", false, "connect with TLS (PostgreSQL: sslmode=require)")
	fs.StringVar(&t.CA, "ca", "", "with --tls: the CA certificate (PEM) to verify the server against")
	fs.BoolVar(&t.Compress, "compress", false, "MySQL protocol compression")
	fs.StringVar(&c.speed, "speed", "1", "think time scale: 1 = as recorded, N = N times faster, max = no waiting")
	fs.DurationVar(&c.o.For, "for", 0, "stop after this long (0 = at the log's end); what was not replayed is counted")
	fs.BoolVar(&c.o.SkipBadLines, "skip-bad-lines", false, "count a line the reader cannot read and go on")
	fs.Int64Var(&c.o.QueueBudget, "queue-budget", 0, "bytes of statements read ahead of the replay, over all sessions (0 = 32 MiB)")
	fs.StringVar(&c.o.SessionsFile, "sessions-file", "", "write one JSON line per session here")
	return c
}

func formatList() string {
	s := make([]string, len(querylog.Formats))
	for i, f := range querylog.Formats {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}

// Options checks the flags and reads the password file.
func (c *ChildCommand) Options() (Options, error) {
	o := c.o
	o.Format = querylog.Format(c.format)
	k, err := engine.Parse(c.engine)
	if err != nil {
		return o, errors.Join(ErrBadOptions, err)
	}
	o.Target.Engine = k
	if o.Speed, err = ParseSpeed(c.speed); err != nil {
		return o, err
	}
	if c.pwFile != "" {
		b, err := os.ReadFile(c.pwFile)
		if err != nil {
			return o, fmt.Errorf("%w: --password-file: %w", ErrBadOptions, err)
		}
		o.Target.Password = strings.TrimRight(string(b), "\r\n")
	}
	return o, o.Validate()
}

// OpenFunc opens a query log of a format as a stream of events; the closer releases the
// file. With skipBad the reader skips the lines it cannot read, counts them and reports
// the count through a Skipped() int64 method (as querylog.Log does).
type OpenFunc func(path string, f querylog.Format, skipBad bool) (querylog.Reader, io.Closer, error)

// Run replays the log named on the command line, writing its lines to stdout.
func (c *ChildCommand) Run(ctx context.Context, open OpenFunc, stdout io.Writer) error {
	o, err := c.Options()
	if err != nil {
		return err
	}
	rd, closer, err := open(o.Log, o.Format, o.SkipBadLines)
	if err != nil {
		return fmt.Errorf("open %s: %w", o.Log, err)
	}
	defer closer.Close()
	// The queued statements are most of what the child holds: a soft limit keeps the
	// collector from letting garbage pile up to twice that.
	debug.SetMemoryLimit(2*o.budget() + 64<<20)
	_, err = Replay(ctx, o, rd, stdout)
	return err
}
