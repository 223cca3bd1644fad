package lab

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/wirelab/wirelab/internal/procfs"
)

// Owner is the process that made a lab and measures in it (a run or a study). While it
// lives the lab is its: commands by hand refuse to change or remove it without --force.
// StartTicks (field 22 of /proc/<pid>/stat) tells the owner from a later process that got
// its pid.
type Owner struct {
	Pid        int    `json:"pid"`
	StartTicks uint64 `json:"start_ticks"`
	Command    string `json:"command"` // the wirelab subcommand, e.g. "study bandwidth"
}

// String is how messages name the owner: "`wirelab study bandwidth` (pid 812)".
func (o Owner) String() string {
	return fmt.Sprintf("`wirelab %s` (pid %d)", o.Command, o.Pid)
}

// SelfOwner is this process as the owner of the lab it is about to make: its own stat is
// read from the machine's /proc, whatever root the command reads others' from.
func SelfOwner(command string) (*Owner, error) {
	st, err := procfs.FS{}.Stat(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("lab owner: %w", err)
	}
	return &Owner{Pid: os.Getpid(), StartTicks: st.StartTime, Command: command}, nil
}

// LiveOwner returns the lab's owner when it is still running in proc: its pid exists, is
// not a zombie and started when the owner did (a reused pid is not the owner). A lab made
// by `wirelab up` has no owner.
func (s *State) LiveOwner(proc procfs.FS) (*Owner, bool) {
	if s.Owner == nil || s.Owner.Pid <= 0 {
		return nil, false
	}
	st, err := proc.Stat(s.Owner.Pid)
	if err != nil || st.Zombie() || st.StartTime != s.Owner.StartTicks {
		return nil, false
	}
	return s.Owner, true
}

// ErrOwned is returned (wrapped in an *OwnedError) when a command by hand would change or
// remove a lab that a live run or study owns.
var ErrOwned = errors.New("lab belongs to a running measurement")

// OwnedError names the lab, its owner and what --force would do.
type OwnedError struct {
	Lab   string
	Owner Owner
	Force string // what --force does, e.g. "re-shape it anyway"
}

func (e *OwnedError) Error() string {
	return fmt.Sprintf("lab %s belongs to %s, which is measuring; use --force to %s", e.Lab, e.Owner, e.Force)
}

// Is makes errors.Is(err, ErrOwned) true.
func (e *OwnedError) Is(target error) bool { return target == ErrOwned }

// CheckOwner returns an *OwnedError when the lab has a live owner other than this process;
// force is what --force would do instead, for the message.
func (s *State) CheckOwner(proc procfs.FS, force string) error {
	o, ok := s.LiveOwner(proc)
	if !ok || o.Pid == os.Getpid() {
		return nil
	}
	return &OwnedError{Lab: s.RunID, Owner: *o, Force: force}
}

// StopOwner stops a live owner so that it tears its own lab down: SIGTERM (its first
// interrupt: finish the point, tear down), a second SIGTERM after secondAfter (tear down
// now), SIGKILL once patience has passed. Each signal goes only to the process that is
// still the owner (same pid and start time). It reports whether SIGKILL was needed.
func StopOwner(proc procfs.FS, o Owner, secondAfter, patience time.Duration) (killed bool, err error) {
	st := &State{Owner: &o}
	live := func() bool { _, ok := st.LiveOwner(proc); return ok }
	signal := func(sig syscall.Signal) {
		if live() {
			_ = syscall.Kill(o.Pid, sig)
		}
	}
	signal(syscall.SIGTERM)
	if waitFor(func() bool { return !live() }, secondAfter) {
		return false, nil
	}
	signal(syscall.SIGTERM)
	if waitFor(func() bool { return !live() }, patience-secondAfter) {
		return false, nil
	}
	signal(syscall.SIGKILL)
	if !waitFor(func() bool { return !live() }, 5*time.Second) {
		return true, fmt.Errorf("stop %s: it survived SIGKILL", o)
	}
	return true, nil
}
