package execx

import (
	"context"
	"fmt"
	"os"
)

// Launcher runs a streamed command on one host: this machine or a lab namespace (Local),
// or a machine reached over SSH. A load driver written against it runs the same way on
// each.
type Launcher interface {
	// Launch runs s to completion on the host (Streamed.Run's contract: every stream
	// returned also on failure, the command killed when ctx ends).
	Launch(ctx context.Context, s Streamed) (stdout, stderr string, err error)
	// TempFile writes data to a new file only its owner can read (a password a command
	// reads from a file, so no process list shows it) and returns its path on the host
	// and how to remove it.
	TempFile(ctx context.Context, data []byte) (path string, remove func(), err error)
	// Local says whether the host shares this machine's file system, so a path checked
	// here is the path the command sees.
	Local() bool
}

// Local launches commands on this machine: inside network namespace NS when it is set,
// in the cgroup v2 directory Cgroup when it is set.
type Local struct {
	NS, Cgroup string
	// Dir is where TempFile writes ("" = the system's temp directory): a directory whose
	// owner removes it (the lab's), so a file a kill -9 leaves behind goes with it.
	Dir string
}

// Launch implements Launcher.
func (l Local) Launch(ctx context.Context, s Streamed) (string, string, error) {
	if l.NS != "" {
		s.Name, s.Args = InNetns(l.NS, s.Name, s.Args...)
	}
	if s.Cgroup == "" {
		s.Cgroup = l.Cgroup
	}
	return s.Run(ctx)
}

// TempFile implements Launcher with a file in Dir, else the system's temp directory,
// mode 0600.
func (l Local) TempFile(_ context.Context, data []byte) (string, func(), error) {
	f, err := os.CreateTemp(l.Dir, "wirelab-*.conf") // created 0600
	if err != nil {
		return "", nil, fmt.Errorf("write a private file: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", nil, fmt.Errorf("write a private file: %w", err)
	}
	return f.Name(), func() { os.Remove(f.Name()) }, nil
}

// Local implements Launcher: the namespaces share this machine's file system.
func (Local) Local() bool { return true }
