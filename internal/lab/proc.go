package lab

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
)

// StartProc starts a long-running helper (socat, a tunnel end, iperf3 -s) inside a host,
// detached in its own session with output to a log file in the lab's temp dir, and records
// it so teardown stops it. The process is reaped by a goroutine so it never lingers as a
// zombie of ours.
func (l *Lab) StartProc(host, name string, argv []string, env []string) (int, error) {
	ns := l.State.NS(host)
	if ns == "" {
		return 0, fmt.Errorf("start %s: lab has no host %q", name, host)
	}
	logPath := filepath.Join(l.State.TempDir, name+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, fmt.Errorf("start %s: %w", name, err)
	}
	defer logf.Close()
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns}, argv...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := execx.StartInCgroup(cmd, l.State.Cgroup); err != nil {
		return 0, fmt.Errorf("start %s in %s: %w", name, host, err)
	}
	go func() { _ = cmd.Wait() }()
	l.State.Procs = append(l.State.Procs, Proc{Name: name, Host: host, Pid: cmd.Process.Pid})
	return cmd.Process.Pid, l.State.Save()
}

// StopProc stops a recorded helper by name (SIGTERM, then SIGKILL) and forgets it.
func (l *Lab) StopProc(name string) error {
	var pids []int
	for _, p := range l.State.Procs {
		if p.Name == name {
			pids = append(pids, p.Pid)
		}
	}
	err := stopPids(pids, 5*time.Second)
	l.State.Procs = removeProc(l.State.Procs, name)
	if serr := l.State.Save(); err == nil {
		err = serr
	}
	return err
}

// Exec runs a command inside a host to completion and returns its stdout.
func (l *Lab) Exec(ctx context.Context, host string, argv ...string) ([]byte, error) {
	ns := l.State.NS(host)
	if ns == "" {
		return nil, fmt.Errorf("lab has no host %q", host)
	}
	return l.runner.Run(ctx, "ip", append([]string{"netns", "exec", ns}, argv...)...)
}

// Attach wraps a state loaded from disk as a Lab, to act on a lab another wirelab built.
// What it starts joins the lab's cgroup, like what the lab's maker started.
func Attach(st *State, o Options) *Lab {
	l := &Lab{State: st, runner: o.Runner, base: o.Runner, log: o.Logger, proc: o.Proc}
	if l.log == nil {
		l.log = discard()
	}
	if st.Cgroup != "" {
		if fi, err := os.Stat(st.Cgroup); err == nil && fi.IsDir() {
			l.runner = inCgroup(o.Runner, st.Cgroup)
		}
	}
	return l
}
