package tunnel

import "time"

// On a mux link with --level auto the zstd level follows the link, like zstd's --adapt:
// the strongest level whose encoder still keeps the WAN full. While the link is the
// bottleneck (auto's queue signal, queue.go) the sender writes as fast as the WAN delivers,
// so the share of wall time the encoder is busy says how much stronger a level the CPU
// can afford: at levelUp or less the next level (typically 2-4x slower) still keeps up;
// above levelDown the encoder is about to become the bottleneck. The time is measured where
// the encoder runs, on whatever CPU the box has left. A change of level starts a new zstd
// stream and loses the history, so decisions are rare, and a level left for being too slow
// is not tried again for levelRetry.
//
// The levels are klauspost's fastest, default and better encoders. In the lab at 20 mbit
// (32 threads of oltp_read_only, 2 cores shared with MariaDB and sysbench) a mux link
// compressed replies 2.9x at level 1 (161 TPS), 3.3x at 3 (181 TPS) and 4.5x at 7 (275
// TPS, 2.6x protocol compression's). The best encoder (11) is left out: it was not seen to
// keep the link full on that box.
var adaptLevels = []int{1, 3, 7}

const (
	// levelEvery is the least time between two level decisions.
	levelEvery = 5 * time.Second
	// levelMinRaw is how many bytes the current level must have encoded to be judged.
	levelMinRaw = 1 << 20
	// levelUp: step up while the encoder is busy at most this share of the time.
	levelUp = 0.2
	// levelDown: step down when it is busy more than this share.
	levelDown = 0.6
	// levelRetry: how long a level stepped down from stays out of reach.
	levelRetry = time.Minute
)

// levelPolicy picks the zstd level of a mux link's sender.
type levelPolicy struct {
	idx       int     // index in adaptLevels
	raw       float64 // bytes encoded at this level since the last decision
	enc       float64 // seconds spent encoding them
	last      time.Time
	ceiling   int // adaptLevels index not to reach before ceilingTo
	ceilingTo time.Time
}

func newLevelPolicy() *levelPolicy { return &levelPolicy{ceiling: len(adaptLevels)} }

// observe feeds one zstd frame: raw bytes in and encoder time.
func (l *levelPolicy) observe(raw int, enc time.Duration) {
	l.raw += float64(raw)
	l.enc += enc.Seconds()
}

// decide returns the level to use; linkBound says the WAN is the bottleneck now. changed
// reports a new level.
func (l *levelPolicy) decide(now time.Time, linkBound bool) (level int, changed bool) {
	if l.last.IsZero() {
		l.last = now
	}
	elapsed := now.Sub(l.last).Seconds()
	if elapsed < levelEvery.Seconds() || l.raw < levelMinRaw {
		return adaptLevels[l.idx], false
	}
	busy := l.enc / elapsed
	prev := l.idx
	if now.After(l.ceilingTo) {
		l.ceiling = len(adaptLevels)
	}
	switch {
	case busy > levelDown && l.idx > 0:
		l.idx--
		l.ceiling, l.ceilingTo = prev, now.Add(levelRetry)
	case busy <= levelUp && linkBound && l.idx+1 < min(len(adaptLevels), l.ceiling):
		l.idx++
	}
	l.raw, l.enc, l.last = 0, 0, now
	return adaptLevels[l.idx], l.idx != prev
}
