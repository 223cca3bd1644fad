package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Stop shuts the server down: SIGINT (PostgreSQL's "fast" shutdown: roll back open
// transactions, disconnect clients, checkpoint), then SIGKILL to the postmaster's whole
// process group once the stop timeout passes or ctx ends, so no orphaned backend keeps
// the socket or shared memory. SIGTERM ("smart") would wait for every client to leave.
// Stop is idempotent and safe on a nil Server or one whose process is already gone.
func (s *Server) Stop(ctx context.Context) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.Pid <= 0 {
		return nil
	}
	log := s.logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	timeout := s.stopTimeout
	if timeout == 0 {
		timeout = DefaultStopTimeout
	}
	if !s.alive() {
		s.stopped = true
		return nil
	}
	exited := s.exitWaiter()
	if err := syscall.Kill(s.Pid, syscall.SIGINT); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop postgres pid %d: %w", s.Pid, err)
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-exited:
		log.Info("postgres stopped", "pid", s.Pid)
		s.stopped = true
		return nil
	case <-t.C:
	case <-ctx.Done():
	}
	log.Warn("postgres did not stop in time; killing", "pid", s.Pid, "timeout", timeout)
	target := s.Pid
	if pgid, err := syscall.Getpgid(s.Pid); err == nil && pgid == s.Pid {
		target = -s.Pid // the postmaster leads its group: its backends go with it
	}
	if err := syscall.Kill(target, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill postgres pid %d: %w", s.Pid, err)
	}
	select {
	case <-exited:
		s.stopped = true
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("kill postgres pid %d: still running after SIGKILL", s.Pid)
	}
}

// exitWaiter returns a channel closed when the process is gone: our child's Wait, or
// polling /proc for a server started by another wirelab process.
func (s *Server) exitWaiter() <-chan struct{} {
	if s.done != nil {
		return s.done
	}
	ch := make(chan struct{})
	go func() {
		for s.alive() {
			time.Sleep(100 * time.Millisecond)
		}
		close(ch)
	}()
	return ch
}

// alive reports whether Pid is still a postmaster (a recycled pid is not ours to kill).
func (s *Server) alive() bool {
	if s.done != nil {
		select {
		case <-s.done:
			return false
		default:
			return true
		}
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(s.Pid), "stat"))
	if err != nil {
		return false
	}
	return isPostgresStat(string(b))
}

// isPostgresStat reads /proc/pid/stat ("pid (comm) state ..."): the postmaster's comm is
// "postgres" (its title in ps changes, its comm does not); a zombie is gone for our
// purposes.
func isPostgresStat(st string) bool {
	i := strings.LastIndexByte(st, ')')
	if i < 0 || !strings.Contains(st[:i+1], " (postgres)") {
		return false
	}
	return !strings.HasPrefix(strings.TrimSpace(st[i+1:]), "Z")
}
