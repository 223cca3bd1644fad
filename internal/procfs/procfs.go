package procfs

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
)

// DefaultRoot is where Linux mounts procfs.
const DefaultRoot = "/proc"

// ThreadNetNS is the calling thread's network namespace, which a thread about to enter
// another (setns) opens to come back. It is always the kernel's own file, never a
// fixture's: a namespace cannot be faked.
const ThreadNetNS = DefaultRoot + "/thread-self/ns/net"

// FS is one machine's /proc. The zero FS is this machine's, at DefaultRoot.
type FS struct {
	root string
	read func(name string) ([]byte, error) // nil: this machine's files (os.ReadFile)
}

// At is this machine's /proc mounted at root ("" = DefaultRoot), or a fixture tree there.
func At(root string) FS { return FS{root: root} }

// Via is another machine's /proc at root ("" = DefaultRoot), each file read by read (a
// real host's ReadFile over SSH). Such an FS reads files by name; it cannot list (Pids).
func Via(root string, read func(name string) ([]byte, error)) FS {
	return FS{root: root, read: read}
}

// ErrNoList is returned by Pids of an FS that reads through another machine's reader.
var ErrNoList = errors.New("this /proc is read file by file: it cannot be listed")

// Root is where the FS reads /proc.
func (f FS) Root() string {
	if f.root == "" {
		return DefaultRoot
	}
	return f.root
}

// Path is the file elem... under the root: Path("net", "dev") is /proc/net/dev.
func (f FS) Path(elem ...string) string { return path.Join(append([]string{f.Root()}, elem...)...) }

// ReadFile reads the file elem... under the root. Its error wraps the reader's, so
// errors.Is(err, fs.ErrNotExist) tells a process that is gone.
func (f FS) ReadFile(elem ...string) ([]byte, error) {
	name := f.Path(elem...)
	if f.read == nil {
		return os.ReadFile(name)
	}
	b, err := f.read(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return b, nil
}

// Pids lists the processes of this machine's /proc (its numeric entries), in the order
// the directory lists them.
func (f FS) Pids() ([]int, error) {
	if f.read != nil {
		return nil, ErrNoList
	}
	ents, err := os.ReadDir(f.Root())
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var pids []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// Comm is a process's name as /proc/<pid>/comm has it: at most 15 bytes of it.
func (f FS) Comm(pid int) (string, error) {
	b, err := f.ReadFile(strconv.Itoa(pid), "comm")
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

// Cmdline is a process's arguments, program first (/proc/<pid>/cmdline); nil for a
// kernel thread or a zombie, which have none.
func (f FS) Cmdline(pid int) ([]string, error) {
	b, err := f.ReadFile(strconv.Itoa(pid), "cmdline")
	if err != nil || len(b) == 0 {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"), nil
}

// Sysctl is the value of a kernel setting under /proc/sys, without the trailing newline.
// name is its path ("net/ipv4/tcp_congestion_control") or, when it has no '/', the name
// sysctl(8) gives it ("net.ipv4.tcp_congestion_control").
func (f FS) Sysctl(name string) (string, error) {
	if !strings.Contains(name, "/") {
		name = strings.ReplaceAll(name, ".", "/")
	}
	b, err := f.ReadFile("sys", name)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
