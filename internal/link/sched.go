package link

import (
	"math"
	"math/rand/v2"
	"time"
)

// The delayer's pure logic lives here, free of the kernel, so it is tested and benchmarked
// without root: when each packet leaves, whether it is lost, and how deep the queues are.

// Scheduler gives each packet of one direction its release time: arrival + delay ± jitter,
// but never earlier than the packet before it. Holding that floor is what keeps jitter from
// reordering a TCP stream (netem's tfifo does reorder); the price is that the effective
// delay is skewed upward when jitter is large relative to the packet spacing. Times are
// nanoseconds on any one clock the caller keeps to.
type Scheduler struct {
	delay, jitter int64
	rng           *rand.Rand
	last          int64
}

// NewScheduler returns a scheduler for one direction; seed makes the jitter reproducible.
func NewScheduler(delay, jitter time.Duration, seed uint64) *Scheduler {
	return &Scheduler{delay: int64(delay), jitter: int64(jitter), rng: rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc909)),
		last: math.MinInt64}
}

// ReleaseNs returns when a packet that arrived at arrival (ns) may leave, and records it as
// the floor for the next packet.
func (s *Scheduler) ReleaseNs(arrival int64) int64 {
	d := s.delay
	if s.jitter > 0 {
		// Uniform in [-jitter, +jitter], like netem without a distribution table.
		d += s.rng.Int64N(2*s.jitter+1) - s.jitter
		d = max(d, 0)
	}
	t := max(arrival+d, s.last)
	s.last = t
	return t
}

// Release is ReleaseNs on wall-clock times.
func (s *Scheduler) Release(arrival time.Time) time.Time {
	return time.Unix(0, s.ReleaseNs(arrival.UnixNano()))
}

// Loss decides, with a seeded generator, which packets are dropped. Independent (Bernoulli)
// loss, like netem's "loss random".
type Loss struct {
	p   float64
	rng *rand.Rand
}

// NewLoss returns a loss decider for pct percent (0..100).
func NewLoss(pct float64, seed uint64) *Loss {
	return &Loss{p: pct / 100, rng: rand.New(rand.NewPCG(seed, 0xbb67ae8584caa73b))}
}

// Drop reports whether the next packet is lost.
func (l *Loss) Drop() bool { return l.p > 0 && l.rng.Float64() < l.p }

// Sizing of delay lines. A delay line holds every packet that arrived within the last
// delay(+jitter), so its length is packets per second × hold time. Packets per second are
// estimated from the rate with a small average packet (a mix of full segments and ACKs),
// so the estimate errs on the long side; memory is only used by packets actually held.
const (
	avgPacketBytes = 512
	unlimitedPPS   = 500_000 // more than the delayer or a veth path carries on one core
	minQueueLen    = 1024    // the kernel's default NFQUEUE length
	maxQueueLen    = 1 << 22
)

// QueueLen returns how many packets a delay line must hold to delay traffic at rateBps
// (0 = unlimited) by hold, with 25% headroom.
func QueueLen(rateBps int64, hold time.Duration) int {
	pps := float64(unlimitedPPS)
	if rateBps > 0 {
		pps = math.Min(pps, float64(rateBps)/8/avgPacketBytes)
	}
	n := int(math.Ceil(pps*hold.Seconds()*1.25)) + 128
	return min(max(n, minQueueLen), maxQueueLen)
}

// held is one packet waiting in a delay line: its queue id and release time (ns).
type held struct {
	id      uint32
	release int64
}

// delayRing is one direction's delay line: packets in arrival order, which is also id order
// and (the Scheduler's floor) release order, so the packets due at any time are a prefix and
// one batch verdict for the last of them releases exactly those. Fixed capacity, no
// allocation after creation.
type delayRing struct {
	buf        []held
	head, size int
}

func newDelayRing(capacity int) *delayRing { return &delayRing{buf: make([]held, max(capacity, 1))} }

func (r *delayRing) len() int   { return r.size }
func (r *delayRing) full() bool { return r.size == len(r.buf) }

// push appends a packet; the caller checks full first.
func (r *delayRing) push(h held) {
	r.buf[(r.head+r.size)%len(r.buf)] = h
	r.size++
}

// next is the release time of the head packet; ok is false when the ring is empty.
func (r *delayRing) next() (release int64, ok bool) {
	if r.size == 0 {
		return 0, false
	}
	return r.buf[r.head].release, true
}

// popDue removes the packets due by now+slack (packets due that soon leave in the same
// verdict rather than cost another wake-up) and returns the last one's id and how many.
func (r *delayRing) popDue(now, slack int64) (last uint32, n int) {
	for r.size > 0 && r.buf[r.head].release <= now+slack {
		last = r.buf[r.head].id
		r.head = (r.head + 1) % len(r.buf)
		r.size--
		n++
	}
	return last, n
}

// popAll removes every packet, for the flush when the delayer stops.
func (r *delayRing) popAll() (last uint32, n int) { return r.popDue(math.MaxInt64/2, 0) }
