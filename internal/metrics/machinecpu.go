package metrics

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/procfs"
)

// parseStatBusy returns the busy clock ticks of all CPUs from /proc/stat: user, nice,
// system, irq, softirq and steal. idle and iowait are not busy; guest time is already
// inside user and nice, so it is not added again.
func parseStatBusy(data []byte) (uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != "cpu" {
			continue
		}
		if len(f) < 8 {
			return 0, fmt.Errorf("parse /proc/stat cpu line: %d fields, want >= 8", len(f))
		}
		var busy uint64
		for _, idx := range []int{1, 2, 3, 6, 7} {
			n, err := strconv.ParseUint(f[idx], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse /proc/stat cpu field %d: %w", idx, err)
			}
			busy += n
		}
		if len(f) > 8 { // steal, since 2.6.11
			n, err := strconv.ParseUint(f[8], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse /proc/stat steal: %w", err)
			}
			busy += n
		}
		return busy, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("parse /proc/stat: %w", err)
	}
	return 0, fmt.Errorf("parse /proc/stat: no aggregate cpu line")
}

// machineCPUCollector reads the whole machine's busy time: on a shared 2-core box the
// client and the server compete for the same cores, and the verdict needs to know.
type machineCPUCollector struct {
	proc procfs.FS
}

func newMachineCPUCollector(proc procfs.FS) *machineCPUCollector {
	return &machineCPUCollector{proc: proc}
}

func (c *machineCPUCollector) collect(snap *snapshot) error {
	data, err := c.proc.ReadFile("stat")
	if err != nil {
		return fmt.Errorf("read machine cpu: %w", err)
	}
	busy, err := parseStatBusy(data)
	if err != nil {
		return err
	}
	snap.cpuTotal = busy
	return nil
}

func (c *machineCPUCollector) close() error { return nil }
