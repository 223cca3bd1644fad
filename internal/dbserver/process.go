package dbserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/procfs"
)

// Process is a server process: one this program started (Spawn), or one found by its pid
// in a state file (Adopt). Stop is idempotent and never signals a pid that no longer
// belongs to a process of the expected name.
type Process struct {
	Pid  int
	name string    // for logs and errors, e.g. "mariadb"
	comm []string  // what /proc/<pid>/stat must name for the pid to still be ours
	proc procfs.FS // where it is looked for: this machine's /proc

	done chan struct{} // closed when our child exits; nil for an adopted process

	mu      sync.Mutex
	stopped bool
}

// Spawn starts name+args in a new session (so the server leads its own process group and
// outlives our terminal) with dir as working directory ("" = ours) and both output
// streams appended to logPath. comm are the names the process has in /proc once it runs
// (after `ip netns exec` and `setpriv` have exec'd into it).
func Spawn(label, logPath, dir, cgroup string, comm []string, name string, args ...string) (*Process, error) {
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", logPath, err)
	}
	defer out.Close()
	// Not CommandContext: the server outlives the caller's context; Stop ends it.
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := execx.StartInCgroup(cmd, cgroup); err != nil {
		return nil, fmt.Errorf("run %s: %w", name, err)
	}
	p := &Process{Pid: cmd.Process.Pid, name: label, comm: comm, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Adopt is a process known only by its pid, e.g. from a state file.
func Adopt(label string, pid int, comm ...string) *Process {
	return &Process{Pid: pid, name: label, comm: comm}
}

// Done is closed when our child has exited; nil for an adopted process.
func (p *Process) Done() <-chan struct{} { return p.done }

// Alive reports whether the process still runs (a zombie or a recycled pid does not).
func (p *Process) Alive() bool {
	if p.done != nil {
		select {
		case <-p.done:
			return false
		default:
			return true
		}
	}
	st, err := p.proc.Stat(p.Pid)
	return err == nil && st.Is(p.comm...)
}

// Tree is the process and its direct children (procfs.FS.Tree): a postmaster and its
// backends.
func (p *Process) Tree() []int { return p.proc.Tree(p.Pid) }

// exited returns a channel closed when the process is gone: our child's exit, or
// polling /proc for an adopted one.
func (p *Process) exited() <-chan struct{} {
	if p.done != nil {
		return p.done
	}
	ch := make(chan struct{})
	go func() {
		for p.Alive() {
			time.Sleep(100 * time.Millisecond)
		}
		close(ch)
	}()
	return ch
}

// Stop sends sig (the server's own graceful shutdown) and waits up to timeout or until
// ctx ends; then it SIGKILLs the process with its children and its process group (so no
// orphaned worker keeps a socket or shared memory). Safe on nil, on a process that
// is gone, and when called twice.
func (p *Process) Stop(ctx context.Context, sig syscall.Signal, timeout time.Duration, log *slog.Logger) error {
	if p == nil || p.Pid <= 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if !p.Alive() {
		p.stopped = true
		return nil
	}
	exited := p.exited()
	if err := syscall.Kill(p.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s pid %d: %w", p.name, p.Pid, err)
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-exited:
		log.Info(p.name+" stopped", "pid", p.Pid)
		p.stopped = true
		return nil
	case <-t.C:
	case <-ctx.Done():
	}
	log.Warn(p.name+" did not stop in time; killing", "pid", p.Pid, "timeout", timeout)
	// Its children first (a postmaster's backends are in sessions of their own), then
	// its process group, or the process alone when it leads none.
	for _, c := range p.Tree() {
		if c != p.Pid {
			_ = syscall.Kill(c, syscall.SIGKILL)
		}
	}
	target := p.Pid
	if pgid, err := syscall.Getpgid(p.Pid); err == nil && pgid == p.Pid {
		target = -p.Pid
	}
	if err := syscall.Kill(target, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s pid %d: %w", p.name, p.Pid, err)
	}
	select {
	case <-exited:
		p.stopped = true
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("kill %s pid %d: still running after SIGKILL", p.name, p.Pid)
	}
}
