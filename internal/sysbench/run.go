package sysbench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
)

// ErrConnect means sysbench's threads could not connect to the server (wrong password,
// unreachable host, TLS files missing or TLS refused, or too many threads for
// max_connections/back_log within sysbench's 30 s connect window).
var ErrConnect = errors.New("sysbench could not connect")

// Run runs `sysbench ... run`, calls onInterval (may be nil) for every report line as it
// arrives, and returns the parsed summary. onInterval runs on the reading goroutine: it
// must return quickly, or sysbench blocks on its output.
//
// When ctx ends, sysbench's whole process group is killed and ctx's error is returned.
func Run(ctx context.Context, o Options, onInterval func(Interval), logger *slog.Logger) (*Summary, error) {
	s, _, err := RunWithOutput(ctx, o, onInterval, logger)
	return s, err
}

// RunWithOutput is Run that also returns sysbench's whole standard output (FATAL lines
// included), also on failure, for logs and for capturing fixtures.
func RunWithOutput(ctx context.Context, o Options, onInterval func(Interval), logger *slog.Logger) (*Summary, string, error) {
	logger = componentLogger(logger)
	out, err := execute(ctx, o, "run", func(line string) {
		if iv, ok := ParseInterval(line); ok {
			logger.Debug("interval", "t", iv.T, "tps", iv.TPS, "qps", iv.QPS, "lat_pct_ms", iv.LatPct)
			if onInterval != nil {
				onInterval(iv)
			}
		}
	}, logger)
	if err != nil {
		return nil, out, err
	}
	s, err := ParseSummary(out)
	if err != nil {
		return nil, out, fmt.Errorf("sysbench run %s: %w", o.Workload, err)
	}
	return &s, out, nil
}

// Prepare creates and fills the tables. It first runs cleanup, so it can be repeated on a
// database that already has them. It uses min(tables, 8) threads whatever o.Threads says.
func Prepare(ctx context.Context, o Options, logger *slog.Logger) error {
	logger = componentLogger(logger)
	c := o
	c.OnStart = nil
	if _, err := execute(ctx, c, "cleanup", nil, logger); err != nil {
		return err
	}
	p := prepareOptions(o)
	p.OnStart = nil
	start := time.Now()
	if _, err := execute(ctx, p, "prepare", nil, logger); err != nil {
		return err
	}
	logger.Info("prepared", "workload", o.Workload, "tables", o.Tables, "table_size", o.TableSize,
		"threads", p.Threads, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// Cleanup drops the tables (DROP TABLE IF EXISTS: harmless when there are none).
func Cleanup(ctx context.Context, o Options, logger *slog.Logger) error {
	o.OnStart = nil
	_, err := execute(ctx, o, "cleanup", nil, componentLogger(logger))
	return err
}

// Version returns sysbench's version, e.g. "1.0.20".
func Version(ctx context.Context) (string, error) {
	return version(ctx, execx.OS{}, "sysbench")
}

func version(ctx context.Context, r execx.Runner, bin string) (string, error) {
	out, err := r.Run(ctx, bin, "--version")
	if err != nil {
		return "", fmt.Errorf("sysbench version: %w", err)
	}
	return parseVersion(string(out))
}

// parseVersion reads "sysbench 1.0.20" or "sysbench 1.0.20-6d9ae1d (using bundled LuaJIT ...)".
func parseVersion(out string) (string, error) {
	f := strings.Fields(out)
	if len(f) < 2 || f[0] != "sysbench" {
		return "", fmt.Errorf("sysbench version: unexpected output %q", strings.TrimSpace(out))
	}
	return f[1], nil
}

// execute runs one sysbench command, feeding each stdout line to onLine as it arrives.
func execute(ctx context.Context, o Options, what string, onLine func(string), logger *slog.Logger) (string, error) {
	if err := o.validate(); err != nil {
		return "", fmt.Errorf("sysbench %s: %w", what, err)
	}
	bin := o.Binary
	if bin == "" {
		bin = "sysbench"
	}
	l := o.launcher()
	if o.HidePassword && o.Password != "" {
		if err := CheckHideable(o.Password); err != nil {
			return "", fmt.Errorf("sysbench %s: %w", what, err)
		}
		// option=value lines, read with --config-file.
		path, remove, err := l.TempFile(ctx, []byte(fmt.Sprintf("%s-password=%s\n", o.driver(), o.Password)))
		if err != nil {
			return "", fmt.Errorf("sysbench %s: password file: %w", what, err)
		}
		defer remove()
		o.Password, o.configFile = "", path
	}
	args := o.Args(what)
	dir := ""
	if o.TLS && o.CertDir != "" {
		dir = o.CertDir
	}
	logger.Debug("starting sysbench", "cmd", what, "ns", o.NS, "argv", redact(append([]string{bin}, args...)))
	// Everything sysbench says, FATAL lines included, goes to stdout.
	text, stderr, err := l.Launch(ctx, execx.Streamed{Name: bin, Args: args, Env: o.Env(), Dir: dir,
		OnStart: o.OnStart, OnStdout: onLine})
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return text, fmt.Errorf("sysbench %s: %w", what, context.Cause(ctx))
	case errors.As(err, &exit), err != nil && !l.Local():
		// A remote host's non-zero exit is its transport's error type.
		return text, describeFailure(what, err, text, stderr)
	case err != nil:
		return text, fmt.Errorf("sysbench %s: %w", what, err)
	}
	return text, nil
}

// CheckHideable says whether HidePassword can carry password: sysbench 1.0.20's config
// file ends a value at the first blank (a password "p w" logs in as "p").
func CheckHideable(password string) error {
	if strings.ContainsAny(password, " \t\r\n") {
		return errors.New("the password has a blank: sysbench 1.0.20 reads it from a config file (kept off its command line, where ps would show it), and that file ends a value at the first blank; use a password without blanks")
	}
	return nil
}

// describeFailure turns a failed run into an error that names sysbench's own reason.
func describeFailure(what string, err error, stdout, stderr string) error {
	fatal := FatalLines(stdout + "\n" + stderr)
	reason := strings.Join(fatal, "; ")
	if reason == "" {
		reason = execx.LastLines(stdout+stderr, 5, " | ")
	}
	// libmariadb and libpq say it differently.
	if strings.Contains(stdout, "unable to connect to MySQL server") || strings.Contains(stdout, "Connection to database failed") {
		return fmt.Errorf("sysbench %s: %w: %v: %s", what, ErrConnect, err, reason)
	}
	return fmt.Errorf("sysbench %s: %w: %s", what, err, reason)
}

// redact hides the password in logged command lines.
func redact(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		for _, p := range []string{"--mysql-password=", "--pgsql-password="} {
			if strings.HasPrefix(a, p) {
				a = p + "***"
			}
		}
		out[i] = a
	}
	return out
}

func componentLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return l.With("component", "sysbench")
}
