package replaystudy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/querylog"
	"github.com/wirelab/wirelab/internal/replay"
)

// LogInfo is a captured log checked before anything is built: where it is, its format,
// the engine it was captured on and what it holds.
type LogInfo struct {
	Path   string // absolute: the replayer in the client host opens it there
	Format querylog.Format
	Engine engine.Kind
	Scan   *replay.ScanResult
}

// LogChecks are how CheckLog treats what it cannot replay.
type LogChecks struct {
	// Format names the log's format; "" detects it.
	Format querylog.Format
	// SkipBadLines counts a line the reader cannot read instead of refusing the log.
	SkipBadLines bool
	// SkipFailedLogins replays a log with sessions whose captured login failed (they are
	// not replayed, and counted) instead of refusing it.
	SkipFailedLogins bool
}

// maxNamed is how many sessions a refusal names.
const maxNamed = 5

// CheckLog reads the whole log once (replay.Scan, streaming) and refuses, naming the file
// and the line, what cannot be replayed: a file that is not there or not text, a format
// it is none of, a line its format cannot read (unless SkipBadLines), sessions whose
// captured login failed (unless SkipFailedLogins), a log without a statement.
func CheckLog(ctx context.Context, path string, c LogChecks) (*LogInfo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file: want a query log", path)
	}
	l, err := querylog.Open(f, querylog.Options{Format: c.Format, SkipBadLines: c.SkipBadLines})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	res, err := replay.Scan(ctx, l)
	var bad *querylog.BadLineError
	if errors.As(err, &bad) {
		return nil, fmt.Errorf("%s (%s): %w; fix or remove the line, or give --skip-bad-lines to skip and count such lines", path, l.Format(), err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	info := &LogInfo{Path: abs, Format: l.Format(), Engine: EngineOf(l.Format()), Scan: res}
	return info, info.refuse(path, c)
}

// refuse is the error for a scanned log that cannot be replayed as asked; nil when it can.
func (i *LogInfo) refuse(path string, c LogChecks) error {
	s := i.Scan
	if n := s.NeverConnectedCount; n > 0 && !c.SkipFailedLogins {
		var at []string
		for _, ls := range s.NeverConnected[:min(len(s.NeverConnected), maxNamed)] {
			at = append(at, fmt.Sprintf("session %s at line %d", ls.Session, ls.Line))
		}
		more := ""
		if n > int64(len(at)) {
			more = fmt.Sprintf(" and %d more", n-int64(len(at)))
		}
		return fmt.Errorf("%s: %d session(s) never connected when captured (the log shows the failed login): %s%s; "+
			"they cannot be replayed: give --skip-failed-logins to replay the others and count these", path, n, strings.Join(at, ", "), more)
	}
	if s.Statements == 0 {
		return fmt.Errorf("%s (%s): no statement to replay in %d lines", path, i.Format, s.Lines)
	}
	return nil
}

// EngineOf is the engine a log of format f was captured on.
func EngineOf(f querylog.Format) engine.Kind {
	if f == querylog.PGStderr || f == querylog.PGCSV {
		return engine.Postgres
	}
	return engine.MariaDB
}
