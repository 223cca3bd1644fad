package metrics

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/wirelab/wirelab/internal/procfs"
)

// ErrNetnsNotFound means the named network namespace has no bind mount under NetnsDir.
var ErrNetnsNotFound = errors.New("network namespace not found")

// withNetns runs fn on an OS thread that has joined the network namespace at nsPath, then
// puts the thread back. Anything fn opens (files under /proc/thread-self/net, sockets)
// stays bound to that namespace after the thread returns, which is what makes this cheap:
// the switch happens once, at open time. The thread is unlocked only after it is back in
// its original namespace; if restoring fails the thread stays locked, and the Go runtime
// discards it when the goroutine exits instead of reusing it in the wrong namespace.
func withNetns(nsPath string, fn func() error) error {
	target, err := os.Open(nsPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("open %s: %w", nsPath, ErrNetnsNotFound)
		}
		return fmt.Errorf("open netns %s: %w", nsPath, err)
	}
	defer target.Close()

	errc := make(chan error, 1) // buffered: the goroutine never blocks on its only send
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open(procfs.ThreadNetNS)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("open own netns: %w", err)
			return
		}
		defer orig.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("setns %s: %w", nsPath, err)
			return
		}
		fnErr := fn()
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			// Leave the thread locked: it dies with this goroutine.
			errc <- errors.Join(fnErr, fmt.Errorf("restore netns after %s: %w", nsPath, err))
			return
		}
		runtime.UnlockOSThread()
		errc <- fnErr
	}()
	return <-errc
}

// openInNetns opens path (relative to the thread's view of procfs) from inside the
// namespace at nsPath.
func openInNetns(nsPath, path string) (*os.File, error) {
	var f *os.File
	err := withNetns(nsPath, func() error {
		var err error
		f, err = os.Open(path)
		return err
	})
	if err != nil {
		if f != nil {
			f.Close()
		}
		return nil, err
	}
	return f, nil
}
