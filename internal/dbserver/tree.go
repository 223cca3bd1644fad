package dbserver

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Tree lists pid and its direct children by reading procRoot (/proc). A server that
// forks a process per connection (the postmaster's backends, its checkpointer and WAL
// writer) is that whole tree: CPU sampling must count it, and a kill must reach it. The
// process group does not do: every postmaster child calls setsid(). Processes that vanish
// while being read are skipped; the result is sorted, pid first when it still runs.
func Tree(procRoot string, pid int) []int {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "stat"))
		if err != nil {
			continue
		}
		if p == pid {
			pids = append(pids, p)
		} else if pp, ok := statPPid(string(b)); ok && pp == pid {
			pids = append(pids, p)
		}
	}
	sort.Ints(pids)
	return pids
}

// statPPid reads field 4 (ppid) of /proc/<pid>/stat, counting from the last ')' because
// comm may hold spaces and parentheses.
func statPPid(stat string) (int, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stat[i+1:]) // f[0] is field 3 (state)
	if len(f) < 2 {
		return 0, false
	}
	pp, err := strconv.Atoi(f[1])
	return pp, err == nil
}
