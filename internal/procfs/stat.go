package procfs

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Stat is what wirelab reads of /proc/<pid>/stat (proc(5)).
type Stat struct {
	PID   int
	Comm  string // field 2 without its parentheses: the name, at most 15 bytes
	State byte   // field 3: R running, S sleeping, D disk wait, Z zombie, ...
	PPID  int    // field 4
	// UTime and STime (fields 14 and 15) are the CPU time of every thread of the process,
	// in clock ticks (CLK_TCK).
	UTime, STime uint64
	// StartTime (field 22) is when the process started, in clock ticks after boot: it
	// tells a process from a later one that got its pid.
	StartTime uint64
}

// ParseStat parses a /proc/<pid>/stat line. The name (field 2) may hold spaces and
// parentheses, so the fields are counted after the last ')'.
func ParseStat(b []byte) (Stat, error) {
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 1 || end < open {
		return Stat{}, fmt.Errorf("parse /proc stat %q: no (name)", abbrev(s))
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return Stat{}, fmt.Errorf("parse /proc stat pid: %w", err)
	}
	f := strings.Fields(s[end+1:]) // f[0] is field 3 (state)
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, fmt.Errorf("parse /proc stat of pid %d: %d fields after the name, want 20 or more", pid, len(f))
	}
	st := Stat{PID: pid, Comm: s[open+1 : end], State: f[0][0]}
	if st.PPID, err = strconv.Atoi(f[4-3]); err != nil {
		return Stat{}, fmt.Errorf("parse /proc stat of pid %d field 4: %w", pid, err)
	}
	for _, u := range []struct {
		field int
		to    *uint64
	}{{14, &st.UTime}, {15, &st.STime}, {22, &st.StartTime}} {
		if *u.to, err = strconv.ParseUint(f[u.field-3], 10, 64); err != nil {
			return Stat{}, fmt.Errorf("parse /proc stat of pid %d field %d: %w", pid, u.field, err)
		}
	}
	return st, nil
}

func abbrev(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// Zombie reports whether the process has exited and waits for its parent to reap it: it
// holds nothing any more.
func (s Stat) Zombie() bool { return s.State == 'Z' }

// Is reports whether the process runs (is no zombie) under one of the names in comm.
func (s Stat) Is(comm ...string) bool { return !s.Zombie() && slices.Contains(comm, s.Comm) }

// Stat reads and parses /proc/<pid>/stat. A process that is gone is a read error that
// errors.Is(err, fs.ErrNotExist) on this machine.
func (f FS) Stat(pid int) (Stat, error) {
	b, err := f.ReadFile(strconv.Itoa(pid), "stat")
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(b)
}

// Alive reports whether pid runs: its stat is there and it is no zombie.
func (f FS) Alive(pid int) bool {
	st, err := f.Stat(pid)
	return err == nil && !st.Zombie()
}

// Tree lists pid and its direct children. A server that forks a process per connection
// (the postmaster's backends, its checkpointer and WAL writer) is that whole tree: CPU
// sampling must count it, and a kill must reach it. The process group does not do: every
// postmaster child calls setsid(). Processes that vanish while being read are skipped;
// the result is sorted, pid first when it still runs; nil when the FS cannot be listed.
func (f FS) Tree(pid int) []int {
	all, err := f.Pids()
	if err != nil {
		return nil
	}
	var pids []int
	for _, p := range all {
		st, err := f.Stat(p)
		if err == nil && (p == pid || st.PPID == pid) {
			pids = append(pids, p)
		}
	}
	sort.Ints(pids)
	return pids
}
