package metrics

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// procTimes is what the sampler needs from /proc/<pid>/stat. utime and stime there cover
// every thread of the process (the thread group), so mysqld's many threads are counted.
type procTimes struct {
	UTime, STime uint64 // clock ticks
	StartTime    uint64 // clock ticks after boot; tells a reused pid from the old process
}

// parseProcStat parses /proc/<pid>/stat. comm (field 2) may contain spaces and ')', so
// the fields are counted from the last ')'.
func parseProcStat(data []byte) (procTimes, error) {
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procTimes{}, fmt.Errorf("parse pid stat: no ')' after comm")
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 20 {
		return procTimes{}, fmt.Errorf("parse pid stat: %d fields after comm, want >= 20", len(f))
	}
	var v [3]uint64
	for k, field := range []int{14, 15, 22} {
		n, err := strconv.ParseUint(f[field-3], 10, 64)
		if err != nil {
			return procTimes{}, fmt.Errorf("parse pid stat field %d: %w", field, err)
		}
		v[k] = n
	}
	return procTimes{UTime: v[0], STime: v[1], StartTime: v[2]}, nil
}

type procKey struct {
	pid   int
	start uint64
}

type procSeen struct{ base, last uint64 }

// procCPUCollector accumulates the CPU time of a changing set of processes. Processes
// present at the baseline count from the baseline; processes first seen later count from
// their start (a sysbench started after Start did all its work inside the window). A
// process that exits keeps the last ticks seen, so the total never goes backwards.
type procCPUCollector struct {
	root     string
	pids     func() []int
	seen     map[procKey]*procSeen
	baseline bool
	set      func(*snapshot, uint64)
}

func newProcCPUCollector(root string, pids func() []int, set func(*snapshot, uint64)) *procCPUCollector {
	return &procCPUCollector{root: root, pids: pids, seen: map[procKey]*procSeen{}, baseline: true, set: set}
}

func (c *procCPUCollector) collect(snap *snapshot) error {
	for _, pid := range c.pids() {
		data, err := os.ReadFile(filepath.Join(c.root, strconv.Itoa(pid), "stat"))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
				continue // exited between listing and reading; its last ticks stay counted
			}
			return fmt.Errorf("read cpu of pid %d: %w", pid, err)
		}
		pt, err := parseProcStat(data)
		if err != nil {
			return fmt.Errorf("pid %d: %w", pid, err)
		}
		ticks := pt.UTime + pt.STime
		k := procKey{pid, pt.StartTime}
		if p, ok := c.seen[k]; ok {
			p.last = max(p.last, ticks)
			continue
		}
		p := &procSeen{last: ticks}
		if c.baseline {
			p.base = ticks
		}
		c.seen[k] = p
	}
	c.baseline = false
	var sum uint64
	for _, p := range c.seen {
		sum += p.last - p.base
	}
	c.set(snap, sum)
	return nil
}

func (c *procCPUCollector) close() error { return nil }
