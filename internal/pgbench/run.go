package pgbench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/postgres"
)

// Errors callers test for; the error text carries pgbench's own reason.
var (
	// ErrConnect means pgbench could not connect (wrong password, unreachable host, TLS
	// refused, or more clients than max_connections).
	ErrConnect = errors.New("pgbench could not connect")
	// ErrAborted means clients were aborted mid-run ("Run was aborted; the above results
	// are incomplete"): an SQL error in the script, or the server went away.
	ErrAborted = errors.New("pgbench run aborted")
	// ErrNotInitialised means the pgbench tables are missing: run Init first.
	ErrNotInitialised = errors.New("pgbench tables missing")
)

// Run runs a benchmark, calls onProgress (may be nil) for every progress line as it
// arrives and returns the parsed summary. onProgress runs on the reading goroutine: it
// must return quickly. When ctx ends, pgbench is killed and ctx's cause is returned.
func Run(ctx context.Context, o Options, onProgress func(Progress), logger *slog.Logger) (*Summary, error) {
	s, _, _, err := RunWithOutput(ctx, o, onProgress, logger)
	return s, err
}

// RunWithOutput is Run that also returns pgbench's standard output (the summary) and
// standard error (progress lines and errors), also on failure, for logs and fixtures.
func RunWithOutput(ctx context.Context, o Options, onProgress func(Progress), logger *slog.Logger) (*Summary, string, string, error) {
	logger = componentLogger(logger)
	if err := o.validate(); err != nil {
		return nil, "", "", fmt.Errorf("pgbench run: %w", err)
	}
	var logDir string
	if o.LatencyLog {
		d, err := os.MkdirTemp("", "wirelab-pgbench-log-")
		if err != nil {
			return nil, "", "", fmt.Errorf("pgbench run: log directory: %w", err)
		}
		defer os.RemoveAll(d)
		logDir, o.logPrefix = d, filepath.Join(d, "tx")
	}
	stdout, stderr, err := execute(ctx, o, o.RunArgs(), func(line string) {
		if p, ok := ParseProgress(line); ok {
			logger.Debug("progress", "t", p.T, "tps", p.TPS, "lat_ms", p.LatAvgMs)
			if onProgress != nil {
				onProgress(p)
			}
		}
	}, logger)
	if err != nil {
		return nil, stdout, stderr, fmt.Errorf("pgbench run: %w", err)
	}
	s, err := ParseSummary(stdout)
	if err != nil {
		return nil, stdout, stderr, fmt.Errorf("pgbench run: %w", err)
	}
	if logDir != "" {
		lg, err := ReadLogs(logDir, o.LatencySkip)
		if err != nil {
			return nil, stdout, stderr, fmt.Errorf("pgbench run: %w", err)
		}
		s.Logged = &lg
	}
	return &s, stdout, stderr, nil
}

// Init creates and fills the pgbench tables at o.Scale (dropping old ones first).
func Init(ctx context.Context, o Options, logger *slog.Logger) error {
	logger = componentLogger(logger)
	o.OnStart = nil
	if _, _, err := execute(ctx, o, o.InitArgs(), nil, logger); err != nil {
		return fmt.Errorf("pgbench init: %w", err)
	}
	logger.Info("initialised", "scale", max(o.Scale, 1))
	return nil
}

// Version returns pgbench's version, e.g. "15.18 (Debian 15.18-0+deb12u1)".
func Version(ctx context.Context, binary string) (string, error) {
	out, err := execx.OS{}.Run(ctx, binaryOrDefault(binary), "--version")
	if err != nil {
		return "", fmt.Errorf("pgbench version: %w", err)
	}
	return parseVersion(string(out))
}

// parseVersion reads "pgbench (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)".
func parseVersion(out string) (string, error) {
	const prefix = "pgbench (PostgreSQL) "
	out = strings.TrimSpace(out)
	if !strings.HasPrefix(out, prefix) {
		return "", fmt.Errorf("pgbench version: unexpected output %q", out)
	}
	return strings.TrimPrefix(out, prefix), nil
}

// binaryOrDefault prefers the server's own pgbench over PATH's: on Debian, PATH has only
// pg_wrapper, which picks a version by its cluster configuration.
func binaryOrDefault(b string) string {
	if b != "" {
		return b
	}
	if dir, err := postgres.FindBinDir(); err == nil {
		return filepath.Join(dir, "pgbench")
	}
	return "pgbench"
}

func execute(ctx context.Context, o Options, args []string, onStderr func(string), logger *slog.Logger) (string, string, error) {
	name := binaryOrDefault(o.Binary)
	if o.NS != "" {
		name, args = execx.InNetns(o.NS, name, args...)
	}
	logger.Debug("starting pgbench", "ns", o.NS, "argv", append([]string{name}, args...))
	stdout, stderr, err := execx.Streamed{Name: name, Args: args, Env: o.Env(), OnStart: o.OnStart,
		OnStderr: onStderr, Cgroup: o.Cgroup}.Run(ctx)
	if err != nil && ctx.Err() == nil {
		err = classify(err, stderr)
	}
	return stdout, stderr, err
}

// classify names pgbench's reason for a failed run, from its "pgbench: error:" lines.
func classify(err error, stderr string) error {
	var reasons []string
	for _, l := range strings.Split(stderr, "\n") {
		if r, ok := strings.CutPrefix(strings.TrimSpace(l), "pgbench: error: "); ok {
			reasons = append(reasons, r)
		}
	}
	reason := strings.Join(reasons, "; ")
	switch {
	case strings.Contains(stderr, "Run was aborted"):
		return fmt.Errorf("%w: %v: %s", ErrAborted, err, reason)
	case strings.Contains(stderr, "pgbench -i"):
		return fmt.Errorf("%w: %v: %s", ErrNotInitialised, err, reason)
	case strings.Contains(stderr, "connection to server"):
		return fmt.Errorf("%w: %v: %s", ErrConnect, err, reason)
	case reason == "":
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr))
	}
	return fmt.Errorf("%w: %s", err, reason)
}

func componentLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return l.With("component", "pgbench")
}
