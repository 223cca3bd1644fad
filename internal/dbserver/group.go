package dbserver

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// GroupPids lists the processes in process group pgid by reading procRoot (/proc): a
// server that forks a process per connection (the postmaster's backends) is its whole
// group, which CPU sampling must count, not its leader alone. Processes that vanish while
// being read are skipped; the result is sorted.
func GroupPids(procRoot string, pgid int) []int {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "stat"))
		if err != nil {
			continue
		}
		if g, ok := statPgrp(string(b)); ok && g == pgid {
			pids = append(pids, pid)
		}
	}
	sort.Ints(pids)
	return pids
}

// statPgrp reads field 5 (pgrp) of /proc/<pid>/stat, counting from the last ')' because
// comm may hold spaces and parentheses.
func statPgrp(stat string) (int, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stat[i+1:]) // f[0] is field 3 (state)
	if len(f) < 3 {
		return 0, false
	}
	g, err := strconv.Atoi(f[2])
	return g, err == nil
}
