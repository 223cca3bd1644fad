package tunnel

import "time"

// On a mux link with --level auto the zstd level follows the link, like zstd's --adapt:
// the strongest level whose encoder still produces wire bytes faster than the WAN delivers
// them. Each level's speed is measured where it runs (encoder time per frame, on whatever
// CPU the box has left), the link's rate is TCP_INFO's delivery rate (queue.go). A change
// of level starts a new zstd stream and loses the history, so decisions are rare and need
// a clear margin either way.
var adaptLevels = []int{1, 3, 7, 11} // klauspost's fastest, default, better and best encoders

const (
	// levelEvery is the least time between two level decisions.
	levelEvery = 5 * time.Second
	// levelMinRaw is how many bytes the current level must have encoded to be judged.
	levelMinRaw = 1 << 20
	// levelUp: step up while the encoder outruns the link by this factor; the next level is
	// typically 2-3x slower, so it still keeps the link full.
	levelUp = 4.0
	// levelDown: step down when the encoder no longer outruns the link by this factor.
	levelDown = 1.5
)

// levelPolicy picks the zstd level of a mux link's sender.
type levelPolicy struct {
	idx       int     // index in adaptLevels
	raw, wire float64 // bytes encoded and produced at this level since the last decision
	enc       float64 // seconds spent encoding them
	last      time.Time
}

func newLevelPolicy() *levelPolicy { return &levelPolicy{} }

// observe feeds one zstd frame: raw bytes in, frame bytes out, encoder time.
func (l *levelPolicy) observe(raw, wire int, enc time.Duration) {
	l.raw += float64(raw)
	l.wire += float64(wire)
	l.enc += enc.Seconds()
}

// decide returns the level to use; delivery is the WAN's rate in bytes/s (0 = unknown:
// keep the level). changed reports a new level.
func (l *levelPolicy) decide(now time.Time, delivery float64) (level int, changed bool) {
	if l.last.IsZero() {
		l.last = now
	}
	if now.Sub(l.last) < levelEvery || l.raw < levelMinRaw || l.enc <= 0 || delivery <= 0 {
		return adaptLevels[l.idx], false
	}
	out := l.wire / l.enc // wire bytes this level produces per second of encoding
	prev := l.idx
	switch {
	case out >= levelUp*delivery && l.idx < len(adaptLevels)-1:
		l.idx++
	case out < levelDown*delivery && l.idx > 0:
		l.idx--
	}
	l.raw, l.wire, l.enc, l.last = 0, 0, 0, now
	return adaptLevels[l.idx], l.idx != prev
}
