package link

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// delayerRTPriority is the SCHED_FIFO priority of the delayer's threads. netem delays in
// softirq context, ahead of every user task; the delayer is a user task, and on a shared
// 2-core machine at load ~20 its wake-ups came 0.3-0.4 ms late per direction (idle RTT +0.7
// ms at 1 ms asked) and its receive loop fell behind at 1 Gbit/s. A low real-time priority
// puts it ahead of ordinary tasks; the kernel's RT throttling (sched_rt_runtime_us) still
// leaves others 5% of each CPU if it ever spins.
const delayerRTPriority = 10

// raiseToRealtime moves every thread of this process (those the Go runtime made so far) to
// SCHED_FIFO; threads created later by one of them inherit it. It reports how many threads it
// moved; failure (no CAP_SYS_NICE, a container) leaves the default policy.
func raiseToRealtime(procSelf string) int {
	ents, err := os.ReadDir(procSelf + "/task")
	if err != nil {
		return 0
	}
	attr := &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: delayerRTPriority}
	n := 0
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if unix.SchedSetAttr(tid, attr, 0) == nil {
			n++
		}
	}
	return n
}
