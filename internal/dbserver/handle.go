package dbserver

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"syscall"
	"time"
)

// Kind is what every server process of one engine has in common: how it is named,
// recognised in /proc and stopped.
type Kind struct {
	Label  string         // in logs and errors: "mariadb", "postgres"
	Comm   []string       // the names the process has in /proc once it runs
	Signal syscall.Signal // the engine's own graceful shutdown
	// StopTimeout is how long that shutdown may take before SIGKILL, when the server
	// names no timeout of its own.
	StopTimeout time.Duration
}

// Handle is a server's hold on its process, the part both engines' Server share: the
// process it spawned, or the one its pid names once the Server was rebuilt from a state
// file (adopted on first use, and again when the pid changes). The zero Handle holds
// nothing. It must not be copied.
type Handle struct {
	mu   sync.Mutex
	proc *Process
}

// Spawn starts the server's process (Spawn: its own session, output appended to
// logPath, in cgroup) and holds it; the pid returned is the server's own.
func (h *Handle) Spawn(k Kind, logPath, dir, cgroup string, log *slog.Logger, name string, args ...string) (int, error) {
	p, err := Spawn(k.Label, logPath, dir, cgroup, k.Comm, name, args...)
	if err != nil {
		return 0, err
	}
	h.mu.Lock()
	h.proc = p
	h.mu.Unlock()
	if log != nil {
		log.Debug(k.Label+" started", "pid", p.Pid, "argv", append([]string{name}, args...))
	}
	return p.Pid, nil
}

// Process is the process h holds when it is pid's, else pid's adopted: a Process that
// never signals a pid no longer of k's names.
func (h *Handle) Process(k Kind, pid int) *Process {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.proc == nil || h.proc.Pid != pid {
		h.proc = Adopt(k.Label, pid, k.Comm...)
	}
	return h.proc
}

// Stop shuts pid's server down: k's signal, then SIGKILL to it and its children once
// timeout (k.StopTimeout when 0) passes or ctx ends (Process.Stop). It is idempotent, and
// does nothing for pid <= 0 or a process that is gone.
func (h *Handle) Stop(ctx context.Context, k Kind, pid int, timeout time.Duration, log *slog.Logger) error {
	if pid <= 0 {
		return nil
	}
	return h.Process(k, pid).Stop(ctx, k.Signal, cmp.Or(timeout, k.StopTimeout), log)
}

// Abandon stops a server whose start failed after its process ran, with stop and a
// deadline of its own (the server's stop timeout and a margin), also when ctx has ended.
// A failure to stop is logged only: the start's error is the one to report.
func Abandon(ctx context.Context, stop func(context.Context) error, stopTimeout time.Duration, log *slog.Logger) {
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout+5*time.Second)
	defer cancel()
	if err := stop(c); err != nil {
		log.Warn("stop after failed start", "err", err)
	}
}
