package hosts

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/lab"
)

// NS is one host of the namespace lab: a thin view of lab.Lab, which keeps owning the
// namespaces, the processes it starts and their teardown.
type NS struct {
	Lab  *lab.Lab
	Role string // lab.Client, lab.Server, lab.Replica, lab.Wire
}

// Name implements Host.
func (n NS) Name() string { return n.Role }

// Run implements Host.
func (n NS) Run(ctx context.Context, argv ...string) ([]byte, error) {
	out, err := n.Lab.Exec(ctx, n.Role, argv...)
	if err != nil {
		return out, fmt.Errorf("host %s: %w", n.Role, err)
	}
	return out, nil
}

// Copy implements Host. The namespaces share this machine's file system, so it is a local
// write (temp file, then rename).
func (n NS) Copy(_ context.Context, r io.Reader, path string, mode uint32) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".wirelab-copy-*")
	if err != nil {
		return fmt.Errorf("host %s: copy to %s: %w", n.Role, path, err)
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), os.FileMode(mode&0o7777))
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("host %s: copy to %s: %w", n.Role, path, err)
	}
	return nil
}

// ReadFile implements Host. It reads from inside the namespace, so per-namespace files
// (/proc/net/dev, /proc/net/snmp) are the host's own.
func (n NS) ReadFile(ctx context.Context, path string) ([]byte, error) {
	return n.Run(ctx, "cat", "--", path)
}

// Start implements Host with lab.StartProc: the process joins the lab's cgroup and state,
// so lab teardown stops it even when Stop is never called. The lab keeps its own log
// file per process name; logPath is not used.
func (n NS) Start(_ context.Context, name string, argv []string, _ string) (Proc, error) {
	pid, err := n.Lab.StartProc(n.Role, name, argv, nil)
	if err != nil {
		return nil, fmt.Errorf("host %s: %w", n.Role, err)
	}
	return nsProc{l: n.Lab, name: name, pid: pid}, nil
}

// Stream implements Host with execx.Streamed through `ip netns exec` (which execs, so the
// pid is the command's), in its own process group, killed with it when ctx ends. It starts
// in the lab's cgroup, as the lab's other processes do, so lab teardown finds anything it
// leaves behind.
func (n NS) Stream(ctx context.Context, argv []string, env []string, onStart func(pid int), onLine func(line string)) (string, string, error) {
	if len(argv) == 0 {
		return "", "", fmt.Errorf("host %s: stream: empty command", n.Role)
	}
	ns := n.Lab.State.NS(n.Role)
	if ns == "" {
		return "", "", fmt.Errorf("host %s: stream %s: the lab has no such host", n.Role, ShellJoin(argv))
	}
	cgroup := n.Lab.State.Cgroup
	if fi, err := os.Stat(cgroup); cgroup != "" && (err != nil || !fi.IsDir()) {
		cgroup = "" // the lab's cgroup is gone (torn down): run where we run
	}
	name, args := execx.InNetns(ns, argv[0], argv[1:]...)
	stdout, stderr, err := execx.Streamed{Name: name, Args: args, Env: env, OnStart: onStart,
		OnStdout: onLine, Cgroup: cgroup}.Run(ctx)
	switch {
	case ctx.Err() != nil:
		return stdout, stderr, fmt.Errorf("host %s: %s: %w", n.Role, ShellJoin(argv), ctx.Err())
	case err != nil:
		return stdout, stderr, streamError(n.Role, argv, err, stderr)
	}
	return stdout, stderr, nil
}

// Close implements Host: the lab outlives its hosts' views.
func (NS) Close() error { return nil }

type nsProc struct {
	l    *lab.Lab
	name string
	pid  int
}

func (p nsProc) Pid() int                   { return p.pid }
func (p nsProc) Stop(context.Context) error { return p.l.StopProc(p.name) }
