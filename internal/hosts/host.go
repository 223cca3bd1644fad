package hosts

import (
	"context"
	"io"
	"strings"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/procfs"
)

// Host is one machine (or namespace) wirelab drives. The study engine sees only this, so a
// namespace host and an SSH host are used the same way. Every method is safe to call from
// several goroutines; Close releases the connection and is idempotent.
type Host interface {
	// Name is the host's name as the user knows it (an inventory entry, a lab role); every
	// error about the host starts with it.
	Name() string
	// Run runs argv to completion (no shell) and returns its standard output. A non-zero
	// exit is an error carrying the command and its standard error.
	Run(ctx context.Context, argv ...string) ([]byte, error)
	// Copy writes r to path on the host with mode, atomically (a temp file renamed).
	Copy(ctx context.Context, r io.Reader, path string, mode uint32) error
	// ReadFile returns the content of path on the host (/proc files included).
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// Start starts argv detached in a process group of its own, output appended to
	// logPath, and returns at once. The process outlives a lost connection; Proc.Stop
	// ends it.
	Start(ctx context.Context, name string, argv []string, logPath string) (Proc, error)
	// Stream runs argv to completion (no shell, as Run) with env ("K=V") added to its
	// environment, calls onStart with its pid on the host once it runs and onLine with
	// each line of its standard output as it arrives (either may be nil; both run on a
	// reading goroutine and must return quickly), and returns all it wrote to each stream,
	// also on failure. When ctx ends the process and its process group are killed on the
	// host and ctx's error is returned; a non-zero exit is an error carrying the command
	// and the last lines of its standard error.
	Stream(ctx context.Context, argv []string, env []string, onStart func(pid int), onLine func(line string)) (stdout, stderr string, err error)
	Close() error
}

// Proc is a long-running process a Host started.
type Proc interface {
	// Pid is the process id on its host, which is also its process group id.
	Pid() int
	// Stop sends SIGTERM to the process group, waits up to a few seconds, then SIGKILLs
	// what is left. Stopping a process that already exited is not an error.
	Stop(ctx context.Context) error
}

// Runner adapts h to execx.Runner, so code written against a runner (tc plans, parsers'
// collectors) runs on any host.
func Runner(h Host) execx.Runner { return hostRunner{h} }

type hostRunner struct{ h Host }

func (r hostRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return r.h.Run(ctx, append([]string{name}, args...)...)
}

// ProcFS is h's /proc, each file read with h.ReadFile under ctx: the parsers of this
// machine's /proc, on another machine.
func ProcFS(ctx context.Context, h Host) procfs.FS {
	return procfs.Via(procfs.DefaultRoot, func(name string) ([]byte, error) { return h.ReadFile(ctx, name) })
}

// ShellQuote quotes s for a POSIX shell: unchanged when it has only safe characters,
// otherwise in single quotes with embedded single quotes escaped.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.ContainsRune("-_./:=@%+,", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellJoin quotes each word of argv and joins them with spaces: the command line a shell
// splits back into argv.
func ShellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = ShellQuote(a)
	}
	return strings.Join(q, " ")
}
