package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
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

// SelfOwner is this process as the owner of the lab it is about to make.
func SelfOwner(command string) (*Owner, error) {
	ticks, _, err := ProcStart("/proc", os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("lab owner: %w", err)
	}
	return &Owner{Pid: os.Getpid(), StartTicks: ticks, Command: command}, nil
}

// ProcStart reads a process's start time (in clock ticks since boot) and whether it is a
// zombie from procRoot/<pid>/stat.
func ProcStart(procRoot string, pid int) (ticks uint64, zombie bool, err error) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false, err
	}
	return parseStat(string(b))
}

// parseStat reads state (field 3) and starttime (field 22) of a /proc/<pid>/stat line. The
// command (field 2) may hold spaces and parentheses, so fields are counted after the last ')'.
func parseStat(s string) (ticks uint64, zombie bool, err error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false, errors.New("parse /proc stat: no command field")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0, false, fmt.Errorf("parse /proc stat: %d fields after the command, want 20", len(f))
	}
	ticks, err = strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("parse /proc stat starttime: %w", err)
	}
	return ticks, f[0] == "Z", nil
}

// LiveOwner returns the lab's owner when it is still running: its pid exists, is not a
// zombie and started when the owner did (a reused pid is not the owner). A lab made by
// `wirelab up` has no owner.
func (s *State) LiveOwner(procRoot string) (*Owner, bool) {
	if s.Owner == nil || s.Owner.Pid <= 0 {
		return nil, false
	}
	ticks, zombie, err := ProcStart(procRoot, s.Owner.Pid)
	if err != nil || zombie || ticks != s.Owner.StartTicks {
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
func (s *State) CheckOwner(procRoot, force string) error {
	o, ok := s.LiveOwner(procRoot)
	if !ok || o.Pid == os.Getpid() {
		return nil
	}
	return &OwnedError{Lab: s.RunID, Owner: *o, Force: force}
}

// StopOwner stops a live owner so that it tears its own lab down: SIGTERM (its first
// interrupt: finish the point, tear down), a second SIGTERM after secondAfter (tear down
// now), SIGKILL once patience has passed. Each signal goes only to the process that is
// still the owner (same pid and start time). It reports whether SIGKILL was needed.
func StopOwner(procRoot string, o Owner, secondAfter, patience time.Duration) (killed bool, err error) {
	st := &State{Owner: &o}
	live := func() bool { _, ok := st.LiveOwner(procRoot); return ok }
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
