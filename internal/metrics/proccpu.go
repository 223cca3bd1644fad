package metrics

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/wirelab/wirelab/internal/procfs"
)

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
	proc     procfs.FS
	pids     func() []int
	seen     map[procKey]*procSeen
	baseline bool
	set      func(*snapshot, uint64)
}

func newProcCPUCollector(proc procfs.FS, pids func() []int, set func(*snapshot, uint64)) *procCPUCollector {
	return &procCPUCollector{proc: proc, pids: pids, seen: map[procKey]*procSeen{}, baseline: true, set: set}
}

func (c *procCPUCollector) collect(snap *snapshot) error {
	for _, pid := range c.pids() {
		pt, err := c.proc.Stat(pid)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH):
			continue // exited between listing and reading; its last ticks stay counted
		case err != nil:
			return fmt.Errorf("read cpu of pid %d: %w", pid, err)
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
