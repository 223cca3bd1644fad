package nstest

import (
	"io"
	"log/slog"
	"strings"
	"testing"
)

// Log is an io.Writer into t's log, one t.Log a write (a progress line, a log record).
func Log(t testing.TB) io.Writer { return tlog{t} }

// Logger is a text logger into t's log, from level up.
func Logger(t testing.TB, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(Log(t), &slog.HandlerOptions{Level: level}))
}

type tlog struct{ t testing.TB }

func (w tlog) Write(b []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
