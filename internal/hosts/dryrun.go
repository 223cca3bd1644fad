package hosts

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/wirelab/wirelab/internal/execx"
)

// DryHost is a Host that prints every command it would run on the named host instead of
// running it (--dry-run). Run answers with empty output, Start with pid 0. With Sudo every
// line shows the `sudo -n` it would go through; Login prints commands run as User itself.
type DryHost struct {
	Host string
	W    io.Writer
	User string
	Sudo bool
	mu   sync.Mutex
}

func (d *DryHost) say(format string, a ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	sudo := ""
	if d.Sudo {
		sudo = "sudo -n "
	}
	fmt.Fprintf(d.W, "%s: %s%s\n", d.Host, sudo, fmt.Sprintf(format, a...))
}

// Login implements LoginHost: it prints each command as run by the login user, without
// sudo, and answers with empty output.
func (d *DryHost) Login() execx.Runner { return dryLogin{d} }

type dryLogin struct{ d *DryHost }

func (l dryLogin) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	l.d.mu.Lock()
	defer l.d.mu.Unlock()
	fmt.Fprintf(l.d.W, "%s: as %s: %s\n", l.d.Host, l.d.User, ShellJoin(append([]string{name}, args...)))
	return nil, nil
}

// Name implements Host.
func (d *DryHost) Name() string { return d.Host }

// Run implements Host.
func (d *DryHost) Run(_ context.Context, argv ...string) ([]byte, error) {
	d.say("%s", ShellJoin(argv))
	return nil, nil
}

// Copy implements Host; it reads r to say how much would be copied.
func (d *DryHost) Copy(_ context.Context, r io.Reader, path string, mode uint32) error {
	n, err := io.Copy(io.Discard, r)
	if err != nil {
		return fmt.Errorf("host %s: copy to %s: %w", d.Host, path, err)
	}
	d.say("copy %d bytes to %s (mode %o)", n, path, mode)
	return nil
}

// ReadFile implements Host.
func (d *DryHost) ReadFile(_ context.Context, path string) ([]byte, error) {
	d.say("cat -- %s", ShellQuote(path))
	return nil, nil
}

// Start implements Host.
func (d *DryHost) Start(_ context.Context, name string, argv []string, logPath string) (Proc, error) {
	d.say("start %s: setsid -f %s >>%s 2>&1", name, ShellJoin(argv), ShellQuote(logPath))
	return dryProc{d: d, name: name}, nil
}

// Stream implements Host: it prints the command and runs nothing, so onStart and onLine
// are never called and the output is empty.
func (d *DryHost) Stream(_ context.Context, argv []string, env []string, _ func(int), _ func(string)) (string, string, error) {
	var b strings.Builder
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		b.WriteString(k + "=" + ShellQuote(v) + " ")
	}
	d.say("stream: %s%s", b.String(), ShellJoin(argv))
	return "", "", nil
}

// Close implements Host.
func (d *DryHost) Close() error { return nil }

type dryProc struct {
	d    *DryHost
	name string
}

func (p dryProc) Pid() int { return 0 }
func (p dryProc) Stop(context.Context) error {
	p.d.say("stop %s: kill -TERM -<pgid>, then -KILL after 5 s", p.name)
	return nil
}
