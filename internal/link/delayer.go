package link

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	nfqueue "github.com/florianl/go-nfqueue"
	"golang.org/x/sys/unix"

	"github.com/wirelab/wirelab/internal/cpuidle"
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
	ProcNet    string // /proc/net, for the kernel's queue counters
	Logger     *slog.Logger
	Realtime   bool // run the delayer's threads SCHED_FIFO (see delayerRTPriority)
	// CPUIdle, when set, is held at 0 µs wake-up latency for the delayer's life: a release
	// is a timer wake-up, and from a deep idle state (a halted vCPU here) late releases
	// added 0.8 ms of RTT at 10 ms and cost up to 23% of goodput at 50-100 mbit
	// (docs/bench-link.md).
	CPUIdle *cpuidle.Paths
}

const (
	socketBuffer = 32 << 20               // netlink receive buffer: a burst must not overflow it
	releaseEarly = 100 * time.Microsecond // nanosleep overshoots ~80-170 µs; wake a little early
	batchSlack   = 50 * time.Microsecond  // packets due this soon leave in the same verdict
	maxBatch     = 256
)

// lane is one queue's delay line.
type lane struct {
	cfg   *DelayerConfig
	nf    *nfqueue.Nfqueue
	ring  chan Held // bounded hand-off from the receive callback to the releaser
	sched *Scheduler
	loss  *Loss
	st    laneStats
}

type laneStats struct {
	received, delayed, lossDropped, overDropped, overAccepted, flushed atomic.Int64
	verdictErr, recvErr, held, maxHeld                                 atomic.Int64
}

// RunDelayer binds the queues, calls ready once they are all bound (the iptables rules may
// then be added), and delays packets until ctx is done. On the way out it releases what it
// holds, so stopping the delayer does not drop a window of traffic.
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
	if cfg.ProcNet == "" {
		cfg.ProcNet = "/proc/net"
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	recvCtx, stopRecv := context.WithCancel(context.Background())
	defer stopRecv()
	var lanes []*lane
	defer func() {
		for _, l := range lanes {
			_ = l.nf.Close()
		}
	}()
	for i, q := range cfg.Queues {
		l, err := openLane(recvCtx, &cfg, q, cfg.Seed+uint64(i)*7919)
		if err != nil {
			return fmt.Errorf("delayer: bind queue %d: %w", q, err)
		}
		lanes = append(lanes, l)
	}
	awake := false
	if cfg.CPUIdle != nil {
		hold, err := cpuidle.Keep(*cfg.CPUIdle)
		if err != nil {
			log.Warn("delayer: CPUs may sleep deeply; releases will be late", "err", err)
		} else {
			awake = true
			defer hold.Release()
		}
	}
	rt := 0
	if cfg.Realtime {
		rt = raiseToRealtime("/proc/self")
	}
	log.Info("delayer bound", "queues", cfg.Queues, "delay", cfg.Delay, "jitter", cfg.Jitter,
		"loss_pct", cfg.LossPct, "max_queue", cfg.MaxQueue, "realtime_threads", rt, "cpus_kept_awake", awake)
	if ready != nil {
		ready()
	}
	relCtx, stopRel := context.WithCancel(context.Background())
	defer stopRel()
	var wg sync.WaitGroup
	for _, l := range lanes {
		wg.Add(1)
		go func() { defer wg.Done(); l.release(relCtx) }()
	}
	tick := time.NewTicker(cfg.StatsEvery)
	defer tick.Stop()
	write := func() {
		if cfg.StatsFile == "" {
			return
		}
		if err := WriteDelayerStats(cfg.StatsFile, snapshot(&cfg, lanes)); err != nil {
			log.Warn("delayer stats", "err", err)
		}
	}
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-tick.C:
			if cfg.Realtime {
				raiseToRealtime("/proc/self") // threads the runtime started since
			}
			write()
		}
	}
	stopRecv() // no new packets; then flush what is held
	stopRel()
	wg.Wait()
	write()
	log.Info("delayer stopped")
	return nil
}

func openLane(ctx context.Context, cfg *DelayerConfig, q uint16, seed uint64) (*lane, error) {
	nf, err := nfqueue.Open(&nfqueue.Config{
		NfQueue:      q,
		MaxQueueLen:  uint32(cfg.MaxQueue),
		MaxPacketLen: 0,
		Copymode:     nfqueue.NfQnlCopyMeta, // the delayer needs ids, not payloads
		// A GSO super-packet is queued whole, not cut into frames first: one message and one
		// verdict instead of up to 45 (see Offloads).
		Flags:        nfqueue.NfQaCfgFlagGSO,
		AfFamily:     unix.AF_INET,
		WriteTimeout: time.Second,
		// No FailOpen: a full kernel queue drops and counts (queue_dropped), never passes
		// packets undelayed behind our back.
	})
	if err != nil {
		return nil, err
	}
	setSocketBuffer(nf)
	l := &lane{cfg: cfg, nf: nf, ring: make(chan Held, cfg.MaxQueue),
		sched: NewScheduler(cfg.Delay, cfg.Jitter, seed), loss: NewLoss(cfg.LossPct, seed^0x5bd1e995)}
	l.st.maxHeld.Store(0)
	errFn := func(err error) int {
		if ctx.Err() != nil {
			return 1
		}
		l.st.recvErr.Add(1)
		return 0
	}
	if err := nf.RegisterWithErrorFunc(ctx, l.receive, errFn); err != nil {
		_ = nf.Close()
		return nil, err
	}
	return l, nil
}

// setSocketBuffer raises the netlink receive buffer past rmem_max (we are root); if it fails
// the default stays and overflows show up as kernel_user_dropped.
func setSocketBuffer(nf *nfqueue.Nfqueue) {
	rc, err := nf.Con.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		if unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, socketBuffer) != nil {
			_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, socketBuffer)
		}
	})
}

// receive is the netlink callback. It must not block: it decides loss, stamps the release
// time and hands the packet to the releaser; if the ring is full the packet gets its verdict
// here and is counted.
func (l *lane) receive(a nfqueue.Attribute) int {
	if a.PacketID == nil {
		return 0
	}
	id := *a.PacketID
	l.st.received.Add(1)
	if l.loss.Drop() {
		// Dropped before any later packet is handed on, so no batch verdict can cover it.
		if l.nf.SetVerdict(id, nfqueue.NfDrop) != nil {
			l.st.verdictErr.Add(1)
		}
		l.st.lossDropped.Add(1)
		return 0
	}
	select {
	case l.ring <- Held{ID: id, Release: l.sched.Release(time.Now())}:
		if n := l.st.held.Add(1); n > l.st.maxHeld.Load() {
			l.st.maxHeld.Store(n)
		}
	default:
		verdict := nfqueue.NfDrop
		if l.cfg.Overflow == "accept" {
			verdict = nfqueue.NfAccept
			l.st.overAccepted.Add(1)
		} else {
			l.st.overDropped.Add(1)
		}
		if l.nf.SetVerdict(id, verdict) != nil {
			l.st.verdictErr.Add(1)
		}
	}
	return 0
}

// release accepts packets in order at their release time, several per verdict when they are
// due together. Release times never decrease within a lane, so a batch verdict ("every id up
// to N") is exact.
func (l *lane) release(ctx context.Context) {
	var head Held
	have := false
	for {
		if !have {
			select {
			case head = <-l.ring:
			case <-ctx.Done():
				l.flush()
				return
			}
		}
		if ctx.Err() != nil {
			l.verdict(head.ID, 1)
			l.st.flushed.Add(1)
			l.st.delayed.Add(-1)
			l.flush()
			return
		}
		sleepUntil(head.Release)
		last, n := head.ID, int64(1)
		have = false
	drain:
		for n < maxBatch {
			select {
			case h := <-l.ring:
				if h.Release.After(time.Now().Add(batchSlack)) {
					head, have = h, true
					break drain
				}
				last = h.ID
				n++
			default:
				break drain
			}
		}
		l.verdict(last, n)
	}
}

func (l *lane) verdict(last uint32, n int64) {
	if err := l.nf.SetVerdictBatch(last, nfqueue.NfAccept); err != nil {
		l.st.verdictErr.Add(n)
	} else {
		l.st.delayed.Add(n)
	}
	l.st.held.Add(-n)
}

// flush accepts everything still held, at once: used when the delayer stops.
func (l *lane) flush() {
	var last uint32
	var n int64
	for {
		select {
		case h := <-l.ring:
			last, n = h.ID, n+1
			continue
		default:
		}
		break
	}
	if n > 0 {
		l.verdict(last, n)
		l.st.delayed.Add(-n)
		l.st.flushed.Add(n)
	}
}

// sleepUntil sleeps with nanosleep rather than a Go timer: Go timers wake up to a
// millisecond late, nanosleep about a tenth of that.
func sleepUntil(t time.Time) {
	d := time.Until(t) - releaseEarly
	if d <= 0 {
		return
	}
	ts := unix.NsecToTimespec(int64(d))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}

func snapshot(cfg *DelayerConfig, lanes []*lane) DelayerStats {
	s := DelayerStats{Updated: time.Now(), Pid: os.Getpid(), Delay: cfg.Delay.String(),
		Jitter: cfg.Jitter.String(), LossPct: cfg.LossPct}
	var kq map[uint16]KernelQueue
	if b, err := os.ReadFile(cfg.ProcNet + "/netfilter/nfnetlink_queue"); err == nil {
		kq, _ = ParseNfnetlinkQueue(b)
	}
	for i, l := range lanes {
		q := QueueStats{Queue: cfg.Queues[i],
			Received: l.st.received.Load(), Delayed: l.st.delayed.Load(),
			LossDropped: l.st.lossDropped.Load(), OverflowDropped: l.st.overDropped.Load(),
			OverflowAccepted: l.st.overAccepted.Load(), FlushedAtExit: l.st.flushed.Load(),
			VerdictErrors: l.st.verdictErr.Load(), RecvErrors: l.st.recvErr.Load(),
			Held: l.st.held.Load(), MaxHeld: l.st.maxHeld.Load()}
		if k, ok := kq[cfg.Queues[i]]; ok {
			q.KernelDropped, q.KernelUserDrop = k.QueueDropped, k.UserDropped
		}
		s.Queues = append(s.Queues, q)
	}
	return s
}
