package machinelock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// File names inside the lock dir.
const (
	LockFile   = "measure.lock"
	HolderFile = "measure.holder" // JSON; not *.json, which are the labs' state files
)

// PollEvery is how often a waiter retries the lock.
var PollEvery = 250 * time.Millisecond

// Holder is the measurement that holds the lock.
type Holder struct {
	Pid     int       `json:"pid"`
	Command string    `json:"command"`       // e.g. "study bandwidth"
	Lab     string    `json:"lab,omitempty"` // its lab's run id, once it has one
	Since   time.Time `json:"since"`
}

// String names the holder the way a user recognises it: "study bandwidth, lab 4ee4e7, pid 812".
func (h Holder) String() string {
	if h.Pid == 0 && h.Command == "" {
		return "another measurement (its holder file is unreadable)"
	}
	s := h.Command
	if s == "" {
		s = "a measurement"
	}
	if h.Lab != "" {
		s += ", lab " + h.Lab
	}
	return s + ", pid " + strconv.Itoa(h.Pid)
}

// ErrBusy is returned (wrapped in a *BusyError) when another measurement holds the lock and
// the caller would not wait.
var ErrBusy = errors.New("another measurement is running on this machine")

// BusyError names the measurement that holds the lock.
type BusyError struct{ Holder Holder }

func (e *BusyError) Error() string {
	since := ""
	if !e.Holder.Since.IsZero() {
		since = fmt.Sprintf(" since %s", e.Holder.Since.Local().Format("15:04:05"))
	}
	return fmt.Sprintf("%v: %s%s (one measurement at a time; wait for it without --no-wait)", ErrBusy, e.Holder, since)
}

// Is makes errors.Is(err, ErrBusy) true.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// Lock is a held measurement lock. Release it when the measurement (and its teardown) ends.
type Lock struct {
	f      *os.File
	dir    string
	holder Holder
	// Waited is how long Acquire waited; WaitedFor the holder it first waited for.
	Waited    time.Duration
	WaitedFor *Holder
}

// Acquire takes the measurement lock in dir (created if missing) for h. When another
// process holds it: with wait false it returns a *BusyError; with wait true it calls onWait
// once per holder it finds (nil is fine) and retries until it gets the lock or ctx ends.
// h.Pid defaults to this process and h.Since to now.
func Acquire(ctx context.Context, dir string, h Holder, wait bool, onWait func(Holder)) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("measurement lock: %w", err)
	}
	if h.Pid == 0 {
		h.Pid = os.Getpid()
	}
	l := &Lock{dir: dir}
	start := time.Now()
	var last *Holder
	for {
		f, err := tryLock(filepath.Join(dir, LockFile))
		if err != nil {
			return nil, err
		}
		if f != nil {
			l.f = f
			break
		}
		other := readHolder(dir)
		if !wait {
			return nil, &BusyError{Holder: other}
		}
		if last == nil || last.Pid != other.Pid || last.Lab != other.Lab {
			if l.WaitedFor == nil {
				first := other
				l.WaitedFor = &first
			}
			last = &other
			if onWait != nil {
				onWait(other)
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for the measurement lock (held by %s): %w", other, context.Cause(ctx))
		case <-time.After(PollEvery):
		}
	}
	if l.WaitedFor != nil {
		l.Waited = time.Since(start)
	}
	if h.Since.IsZero() {
		h.Since = time.Now().UTC()
	}
	l.holder = h
	if err := l.writeHolder(); err != nil {
		l.Release()
		return nil, err
	}
	return l, nil
}

// tryLock opens path and takes an exclusive flock without blocking: the locked file, or nil
// when another process holds it. Release unlinks the file (a state dir holds nothing once
// every measurement is over), so a lock taken on a file that is no longer at path is dropped
// and taken again on the file that is.
func tryLock(path string) (*os.File, error) {
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC, 0o644)
		if err != nil {
			return nil, fmt.Errorf("measurement lock: %w", err)
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, nil
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("measurement lock %s: %w", path, err)
		}
		held, herr := f.Stat()
		now, nerr := os.Stat(path)
		if herr == nil && nerr == nil && os.SameFile(held, now) {
			return f, nil
		}
		f.Close() // unlinked by its last holder between our open and our flock
	}
}

// Holder is who the lock says holds it (this process).
func (l *Lock) Holder() Holder { return l.holder }

// SetLab records the holder's lab, so a waiter can name it.
func (l *Lock) SetLab(id string) error {
	l.holder.Lab = id
	return l.writeHolder()
}

// Release drops the lock. It is safe on nil and twice.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	// Removed while still locked: a waiter that locks the unlinked file sees it is stale
	// (tryLock) and one that reads the holder afterwards finds the lock free.
	_ = os.Remove(filepath.Join(l.dir, HolderFile))
	_ = os.Remove(filepath.Join(l.dir, LockFile))
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
	l.f = nil
}

func (l *Lock) writeHolder() error {
	b, err := json.Marshal(l.holder)
	if err != nil {
		return fmt.Errorf("measurement lock holder: %w", err)
	}
	path := filepath.Join(l.dir, HolderFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("measurement lock holder: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("measurement lock holder: %w", err)
	}
	return nil
}

// readHolder reads who holds the lock. The holder writes the file just after locking and a
// holder killed with -9 leaves a stale one behind, so a missing, unreadable or dead holder
// is re-read a few times before it is reported as is.
func readHolder(dir string) Holder {
	var h Holder
	for i := 0; i < 5; i++ {
		h = Holder{}
		b, err := os.ReadFile(filepath.Join(dir, HolderFile))
		if err == nil && json.Unmarshal(b, &h) == nil && h.Pid > 0 && syscall.Kill(h.Pid, 0) != syscall.ESRCH {
			return h
		}
		time.Sleep(20 * time.Millisecond)
	}
	return h
}

// Peek returns the measurement holding the lock in dir, from its holder file, without
// touching the lock (a peek that took it, even briefly, could make a real acquirer fail).
// A holder file left by a killed process whose pid is gone does not count.
func Peek(dir string) (Holder, bool) {
	var h Holder
	b, err := os.ReadFile(filepath.Join(dir, HolderFile))
	if err != nil || json.Unmarshal(b, &h) != nil || h.Pid <= 0 {
		return Holder{}, false
	}
	if syscall.Kill(h.Pid, 0) == syscall.ESRCH {
		return Holder{}, false
	}
	return h, true
}
