package link

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/wirelab/wirelab/internal/cpuidle"
	"github.com/wirelab/wirelab/internal/procfs"
	"github.com/wirelab/wirelab/internal/result"
)

// DelayerConfig is one delayer process: a delay line per NFQUEUE queue number (one per
// egress interface, so one per direction for two hosts).
type DelayerConfig struct {
	Queues     []uint16
	Delay      time.Duration
	Jitter     time.Duration
	LossPct    float64
	MaxQueue   int    // packets per delay line (kernel queue and user-space ring)
	Seed       uint64 // jitter and loss are reproducible for a seed
	Overflow   string // "drop" (default: a full queue tail-drops, like a router) or "accept"
	StatsFile  string // written about once a second; "" = none
	StatsEvery time.Duration
	Proc       procfs.FS // this machine's /proc: net/netfilter has the kernel's queue counters
	Logger     *slog.Logger
	Realtime   bool          // run the delay loop's one thread SCHED_FIFO (see delayerRTPriority)
	MaxSpin    time.Duration // longest the loop spins before a release instead of sleeping; 0 = never
	// CPUIdle, when set, is held at 0 µs wake-up latency for the delayer's life: a release
	// is a timer wake-up, and a vCPU woken from a deep idle state wakes late.
	CPUIdle *cpuidle.Paths
}

// Timing of the delay loop.
const (
	// The loop releases on a grid: packets due within the slack leave in the same verdict
	// instead of costing another wake-up, the delay line's main cost (docs/delay-line.md).
	// The slack is a twentieth of the one-way delay, at most maxSlack. The head packet of a
	// batch never leaves early (a lone request/response packet sees exactly the delay), the
	// others up to the slack early.
	maxSlack     = 100 * time.Microsecond
	slackDivisor = 20
	// The loop sleeps until a release minus its expected wake-up lateness and spins the rest,
	// so a vCPU that wakes slowly (halted, no cpuidle driver) does not make every release
	// late. The lateness is learned from the loop's own timed wake-ups.
	minEarly  = 5 * time.Microsecond
	maxEarly  = 150 * time.Microsecond
	initEarly = 30 * time.Microsecond
	// The spin is bounded: at most spinBudget of every spinWindow. An idle machine spends
	// that on a few exact releases; a loaded one, whose lateness is the scheduler's and is
	// not cured by spinning, stops spinning instead of taking CPU from the database.
	spinBudget = 2 * time.Millisecond
	spinWindow = 100 * time.Millisecond
	// idlePoll bounds a wait with nothing held, so a stop is never missed for long even if
	// the wake-up descriptor were lost.
	idlePoll = 200 * time.Millisecond
	// verdictSampleEvery: one accepting verdict in this many is timed (two clock reads of
	// the thread's CPU, a system call each).
	verdictSampleEvery = 8
)

// lane is one queue's delay line. Only the loop thread touches it, except st.
type lane struct {
	sock *nfqSock
	ring *delayRing
	sch  *Scheduler
	loss *Loss
	st   laneStats
}

// laneStats are written by the loop thread and read by the stats writer.
type laneStats struct {
	received, delayed, lossDropped, overDropped, overAccepted, flushed atomic.Int64
	verdictErr, recvErr, held, maxHeld, kernelStamped                  atomic.Int64
}

// loopStats are the loop thread's own counters.
type loopStats struct {
	wakeups, spins, batches atomic.Int64
	earlyNs                 atomic.Int64
	verdictNs, verdictPkts  atomic.Int64 // sampled accepting verdicts' thread CPU and packets
	// How late each release's head packet left after its due time (see LateBoundsUs).
	lateSumNs atomic.Int64
	late      [len(LateBoundsUs) + 1]atomic.Int64
}

// recordLate counts one head packet released late ns after its due time.
func (s *loopStats) recordLate(late int64) {
	s.lateSumNs.Add(late)
	i := 0
	for i < len(LateBoundsUs) && late > LateBoundsUs[i]*1e3 {
		i++
	}
	s.late[i].Add(1)
}

// RunDelayer binds the queues, calls ready once they are all bound (the iptables rules may
// then be added), and delays packets until ctx is done. On the way out it releases what it
// holds, so stopping the delayer does not drop a window of traffic.
//
// All lanes are served by one goroutine locked to one OS thread: it reads every lane's
// queued packets with recvmmsg, stamps their release times, sleeps in ppoll until the
// earliest release (or a new packet), and releases each lane's due prefix with one batch
// verdict. The CPU it costs is counted (getrusage) and written with the stats.
func RunDelayer(ctx context.Context, cfg DelayerConfig, ready func()) error {
	if len(cfg.Queues) == 0 {
		return errors.New("delayer: no queue")
	}
	if cfg.MaxQueue <= 0 {
		cfg.MaxQueue = QueueLen(0, cfg.Delay+cfg.Jitter)
	}
	if cfg.StatsEvery <= 0 {
		cfg.StatsEvery = time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var lanes []*lane
	defer func() {
		for _, l := range lanes {
			_ = l.sock.close()
		}
	}()
	for i, q := range cfg.Queues {
		s, err := openNfq(q, uint32(cfg.MaxQueue))
		if err != nil {
			return fmt.Errorf("delayer: bind queue %d: %w", q, err)
		}
		seed := cfg.Seed + uint64(i)*7919
		lanes = append(lanes, &lane{sock: s, ring: newDelayRing(cfg.MaxQueue),
			sch: NewScheduler(cfg.Delay, cfg.Jitter, seed), loss: NewLoss(cfg.LossPct, seed^0x5bd1e995)})
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return fmt.Errorf("delayer: eventfd: %w", err)
	}
	defer unix.Close(wake)
	awake := false
	var held *result.CPUHold
	if cfg.CPUIdle != nil {
		hold, err := cpuidle.Keep(*cfg.CPUIdle)
		if err != nil {
			log.Warn("delayer: CPUs may sleep deeply; the loop spins its wake-ups instead", "err", err)
			held = &result.CPUHold{Error: err.Error()}
		} else {
			awake = true
			held = &result.CPUHold{Held: true}
			defer hold.Release()
		}
	}
	log.Info("delayer bound", "queues", cfg.Queues, "delay", cfg.Delay, "jitter", cfg.Jitter,
		"loss_pct", cfg.LossPct, "max_queue", cfg.MaxQueue, "realtime", cfg.Realtime, "cpus_kept_awake", awake)
	if ready != nil {
		ready()
	}
	lp := &loop{cfg: &cfg, lanes: lanes, wake: wake, log: log, held: held}
	done := make(chan error, 1)
	go func() { done <- lp.run() }()
	start := time.Now()
	tick := time.NewTicker(cfg.StatsEvery)
	defer tick.Stop()
	write := func() {
		if cfg.StatsFile == "" {
			return
		}
		if err := WriteDelayerStats(cfg.StatsFile, lp.snapshot(start)); err != nil {
			log.Warn("delayer stats", "err", err)
		}
	}
	var loopErr error
	for running := true; running; {
		select {
		case <-ctx.Done():
			lp.stop.Store(true)
			var one [8]byte
			one[0] = 1
			_, _ = unix.Write(wake, one[:])
			loopErr = <-done
			running = false
		case loopErr = <-done:
			running = false
		case <-tick.C:
			write()
		}
	}
	write()
	log.Info("delayer stopped", "err", loopErr)
	return loopErr
}

// loop is the delay line's one thread.
type loop struct {
	cfg      *DelayerConfig
	lanes    []*lane
	wake     int
	log      *slog.Logger
	stop     atomic.Bool
	st       loopStats
	held     *result.CPUHold // the CPU hold as it went, for the stats (read-only)
	base     time.Time       // the loop's clock: monotonic ns since base
	early    int64           // how long before a release the loop wakes to spin the rest
	slack    int64           // the release grid (see maxSlack)
	verdicts int64
	fds      []unix.PollFd
	// stamped: the last packet carried the kernel's arrival time, so packets need not be
	// read the moment they arrive.
	stamped bool
	// The spin budget's accounting (see spinBudget).
	spinning                        bool
	spinLast, spinUsed, windowStart int64
}

func (lp *loop) now() int64 { return int64(time.Since(lp.base)) }

func (lp *loop) run() error {
	runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
	// Timer slack: a normal thread's timers may fire up to 50 µs late to save wake-ups; the
	// loop's timers are the delay.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	if lp.cfg.Realtime {
		if err := setRealtime(0); err != nil {
			lp.log.Warn("delayer: loop thread stays SCHED_OTHER", "err", err)
		}
	}
	lp.slack = min(int64(lp.cfg.Delay)/slackDivisor, int64(maxSlack))
	lp.base = time.Now()
	lp.early = int64(initEarly)
	lp.fds = make([]unix.PollFd, len(lp.lanes)+1)
	for i, l := range lp.lanes {
		lp.fds[i] = unix.PollFd{Fd: int32(l.sock.fd), Events: unix.POLLIN}
	}
	lp.fds[len(lp.lanes)] = unix.PollFd{Fd: int32(lp.wake), Events: unix.POLLIN}
	for !lp.stop.Load() {
		// What is due leaves first: reading the packets queued meanwhile (up to 64 per lane
		// and call) would otherwise make it late. Their arrival is the kernel's stamp, so
		// reading them after the release does not lengthen their own delay.
		now := lp.now()
		for _, l := range lp.lanes {
			lp.release(l, now)
		}
		lp.receiveAll()
		now = lp.now()
		next := int64(-1)
		for _, l := range lp.lanes {
			lp.release(l, now)
			if r, ok := l.ring.next(); ok && (next < 0 || r < next) {
				next = r
			}
		}
		spin := lp.spinFor(now)
		if next >= 0 && next-now <= spin {
			lp.st.spins.Add(1)
			if lp.spinning {
				lp.spinUsed += now - lp.spinLast
			}
			lp.spinning, lp.spinLast = true, now
			continue // due within the learned lateness: spin, reading new packets meanwhile
		}
		lp.spinning = false
		if err := lp.wait(now, next, spin); err != nil {
			return err
		}
	}
	for _, l := range lp.lanes {
		lp.receive(l)
		if last, n := l.ring.popAll(); n > 0 {
			lp.verdict(l, last, n)
			l.st.delayed.Add(int64(-n))
			l.st.flushed.Add(int64(n))
		}
	}
	return nil
}

// spinFor is how long before a release the loop may spin now: the learned lateness, up to
// MaxSpin, while the window's spin budget lasts.
func (lp *loop) spinFor(now int64) int64 {
	if now-lp.windowStart >= int64(spinWindow) {
		lp.windowStart, lp.spinUsed = now, 0
	}
	if lp.spinUsed >= int64(spinBudget) {
		return 0
	}
	return min(lp.early, int64(lp.cfg.MaxSpin))
}

// wait sleeps in ppoll until a lane has packets, the stop descriptor fires, or the head
// release (next, -1 for none) minus spin. A timed-out wait updates the learned lateness
// from how late this wake-up really was.
func (lp *loop) wait(now, next, spin int64) error {
	timeout := int64(idlePoll)
	if next >= 0 {
		timeout = next - now - spin
	}
	ts := unix.NsecToTimespec(timeout)
	fds := lp.fds
	if next >= 0 && lp.stamped {
		// Packets that arrive meanwhile are timed by the kernel and release after the head
		// (the Scheduler's floor), so they can wait in the socket until the head's release:
		// no wake-up per arrival, only per release.
		fds = lp.fds[len(lp.lanes):]
	}
	for i := range fds {
		fds[i].Revents = 0
	}
	// A raw system call keeps the loop's P (GOMAXPROCS leaves the stats writer another),
	// so no wake-up pays the scheduler's hand-off and the runtime's monitor stays asleep.
	r, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)),
		uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	if e != 0 && e != unix.EINTR {
		return fmt.Errorf("delayer: ppoll: %w", e)
	}
	n := int(r)
	lp.st.wakeups.Add(1)
	if n == 0 && next >= 0 {
		late := lp.now() - (now + timeout)
		// Track the lateness as an exponentially weighted average with a margin; the spin
		// that follows covers what the sleep overshot.
		e := lp.early + (2*late+int64(minEarly)-lp.early)/8
		lp.early = min(max(e, int64(minEarly)), int64(maxEarly))
		lp.st.earlyNs.Store(lp.early)
	}
	return nil
}

func (lp *loop) receiveAll() {
	for _, l := range lp.lanes {
		lp.receive(l)
	}
}

// receive drains one lane's socket: each packet is lost (on purpose, --loss), held with its
// release time, or, with the ring full, dropped or passed at once (--overflow).
func (lp *loop) receive(l *lane) {
	for {
		pkts, verrs, err := l.sock.recv()
		if verrs > 0 {
			l.st.verdictErr.Add(int64(verrs))
		}
		if err != nil {
			if err != unix.EAGAIN && err != unix.EINTR {
				l.st.recvErr.Add(1)
			}
			return
		}
		if len(pkts) == 0 {
			return
		}
		t := time.Now()
		mono, real := int64(t.Sub(lp.base)), t.UnixNano()
		for _, p := range pkts {
			lp.admit(l, p, mono, real)
		}
		if held := int64(l.ring.len()); held > l.st.maxHeld.Load() {
			l.st.maxHeld.Store(held)
		}
		l.st.held.Store(int64(l.ring.len()))
		if len(pkts) < recvBatch {
			return
		}
	}
}

// admit gives one packet its fate. The arrival is the kernel's timestamp when the packet
// carries a plausible one (it does not wait for this thread to wake), else now.
func (lp *loop) admit(l *lane, p nfqPacket, mono, real int64) {
	l.st.received.Add(1)
	if l.loss.Drop() {
		// Its own verdict now, before any later packet's batch verdict could cover it.
		if l.sock.verdict(p.ID, nfDrop, false) != nil {
			l.st.verdictErr.Add(1)
		}
		l.st.lossDropped.Add(1)
		return
	}
	if l.ring.full() {
		v := uint32(nfDrop)
		if lp.cfg.Overflow == "accept" {
			v = nfAccept
			l.st.overAccepted.Add(1)
		} else {
			l.st.overDropped.Add(1)
		}
		if l.sock.verdict(p.ID, v, false) != nil {
			l.st.verdictErr.Add(1)
		}
		return
	}
	arrival := mono
	age := real - p.Stamp
	lp.stamped = p.Stamp > 0 && age >= 0 && age < int64(time.Second)
	if lp.stamped {
		arrival = mono - age
		l.st.kernelStamped.Add(1)
	}
	l.ring.push(held{id: p.ID, release: l.sch.ReleaseNs(arrival)})
}

// release accepts the lane's due prefix with one batch verdict: once the head packet is due
// (never before), with it every packet due within the slack.
func (lp *loop) release(l *lane, now int64) {
	head, ok := l.ring.next()
	if !ok || head > now {
		return
	}
	lp.st.recordLate(now - head)
	if last, n := l.ring.popDue(now, lp.slack); n > 0 {
		lp.verdict(l, last, n)
		lp.st.batches.Add(1)
		l.st.held.Store(int64(l.ring.len()))
	}
}

// verdict accepts the lane's packets up to id last (n of them). Every verdictSampleEvery-th
// verdict is timed in thread CPU: the whole write, in which the kernel handles the netlink
// message, frees the batch's queue entries, runs the rest of the netfilter hooks and
// forwards the accepted packets into the receiving host's stack (TCP receive, waking its
// reader). The last part is work the sender's own context does when no delay line is in
// the path, but the thread's CPU clock cannot tell it from the rest: the stats show the
// sample beside the delay line's CPU and subtract none of it (see DelayerCost).
func (lp *loop) verdict(l *lane, last uint32, n int) {
	lp.verdicts++
	sample := lp.verdicts%verdictSampleEvery == 0
	var t0 unix.Timespec
	if sample {
		_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t0)
	}
	if err := l.sock.verdict(last, nfAccept, true); err != nil {
		l.st.verdictErr.Add(int64(n))
		return
	}
	if sample {
		var t1 unix.Timespec
		if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t1) == nil {
			lp.st.verdictNs.Add(t1.Nano() - t0.Nano())
			lp.st.verdictPkts.Add(int64(n))
		}
	}
	l.st.delayed.Add(int64(n))
}

// snapshot is the stats file's content: the lanes' counters, the kernel's queue counters,
// and the CPU the whole delayer process has used since it started.
func (lp *loop) snapshot(start time.Time) DelayerStats {
	cfg := lp.cfg
	s := DelayerStats{Updated: time.Now(), Pid: os.Getpid(), Delay: cfg.Delay.String(),
		Jitter: cfg.Jitter.String(), LossPct: cfg.LossPct, Since: start,
		Wakeups: lp.st.wakeups.Load(), Spins: lp.st.spins.Load(), Batches: lp.st.batches.Load(),
		EarlyUs:          float64(lp.st.earlyNs.Load()) / 1e3,
		VerdictSampledNs: lp.st.verdictNs.Load(), VerdictSampledPackets: lp.st.verdictPkts.Load(),
		HeadLateSumNs: lp.st.lateSumNs.Load(), HeadLate: make([]int64, len(lp.st.late)), CPUHold: lp.held}
	for i := range lp.st.late {
		s.HeadLate[i] = lp.st.late[i].Load()
	}
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) == nil {
		s.CPUNs = ru.Utime.Nano() + ru.Stime.Nano()
	}
	var kq map[uint16]KernelQueue
	if b, err := cfg.Proc.ReadFile("net", "netfilter", "nfnetlink_queue"); err == nil {
		kq, _ = ParseNfnetlinkQueue(b)
	}
	for i, l := range lp.lanes {
		q := QueueStats{Queue: cfg.Queues[i],
			Received: l.st.received.Load(), Delayed: l.st.delayed.Load(),
			LossDropped: l.st.lossDropped.Load(), OverflowDropped: l.st.overDropped.Load(),
			OverflowAccepted: l.st.overAccepted.Load(), FlushedAtExit: l.st.flushed.Load(),
			VerdictErrors: l.st.verdictErr.Load(), RecvErrors: l.st.recvErr.Load(),
			Held: l.st.held.Load(), MaxHeld: l.st.maxHeld.Load(), KernelStamped: l.st.kernelStamped.Load()}
		if k, ok := kq[cfg.Queues[i]]; ok {
			q.KernelDropped, q.KernelUserDrop = k.QueueDropped, k.UserDropped
		}
		s.Queues = append(s.Queues, q)
	}
	return s
}
