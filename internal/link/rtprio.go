package link

import "golang.org/x/sys/unix"

// delayerRTPriority is the SCHED_FIFO priority of the delayer's threads. netem delays in
// softirq context, ahead of every user task; the delayer is a user task, and on a shared
// 2-core machine at load ~20 its wake-ups came 0.3-0.4 ms late per direction (idle RTT +0.7
// ms at 1 ms asked) and its receive loop fell behind at 1 Gbit/s. A low real-time priority
// puts it ahead of ordinary tasks; the kernel's RT throttling (sched_rt_runtime_us) still
// leaves others 5% of each CPU if it ever spins.
const delayerRTPriority = 10

// setRealtime moves thread tid (0: the calling thread) to SCHED_FIFO at delayerRTPriority.
// It fails without CAP_SYS_NICE (a container), and the thread keeps the default policy.
func setRealtime(tid int) error {
	attr := &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: delayerRTPriority}
	return unix.SchedSetAttr(tid, attr, 0)
}
