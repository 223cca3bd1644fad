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
// delay is skewed upward when jitter is large relative to the packet spacing.
type Scheduler struct {
	delay, jitter time.Duration
	rng           *rand.Rand
	last          time.Time
}

// NewScheduler returns a scheduler for one direction; seed makes the jitter reproducible.
func NewScheduler(delay, jitter time.Duration, seed uint64) *Scheduler {
	return &Scheduler{delay: delay, jitter: jitter, rng: rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc909))}
}

// Release returns when a packet that arrived at arrival may leave, and records it as the
// floor for the next packet.
func (s *Scheduler) Release(arrival time.Time) time.Time {
	d := s.delay
	if s.jitter > 0 {
		// Uniform in [-jitter, +jitter], like netem without a distribution table.
		d += time.Duration(s.rng.Int64N(int64(2*s.jitter)+1)) - s.jitter
		if d < 0 {
			d = 0
		}
	}
	t := arrival.Add(d)
	if t.Before(s.last) {
		t = s.last
	}
	s.last = t
	return t
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

// Held is one packet waiting in a delay line.
type Held struct {
	ID      uint32
	Release time.Time
}

// Due returns how many packets at the head of q may be released at now, allowing slack
// (packets due within slack leave in the same batch rather than costing another wake-up).
// q is in release order, so the due packets are a prefix.
func Due(q []Held, now time.Time, slack time.Duration) int {
	limit := now.Add(slack)
	n := 0
	for n < len(q) && !q[n].Release.After(limit) {
		n++
	}
	return n
}
