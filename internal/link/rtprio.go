package link

import "golang.org/x/sys/unix"

// delayerRTPriority is the SCHED_FIFO priority of the delay loop's one thread. netem delays
// in softirq context, ahead of every user task; the loop is a user task, and with the
// database busy on every core an ordinary thread's release waits for the scheduler, which
// lengthens the RTT under load (docs/delay-line.md). A low real-time priority puts the
// loop ahead of ordinary tasks. Only the loop thread gets it, and the loop costs a few µs a
// packet and spins within its budget (spinBudget), so it cannot starve the database; the
// kernel's RT throttling (sched_rt_runtime_us) would leave others 5% of each CPU regardless.
const delayerRTPriority = 10

// setRealtime moves thread tid (0: the calling thread) to SCHED_FIFO at delayerRTPriority.
// It fails without CAP_SYS_NICE (a container), and the thread keeps the default policy.
func setRealtime(tid int) error {
	attr := &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: delayerRTPriority}
	return unix.SchedSetAttr(tid, attr, 0)
}
