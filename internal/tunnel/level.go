package tunnel

import (
	"fmt"
	"math"
	"time"
)

// On a mux link with --level auto the zstd level follows the link, like zstd's --adapt:
// the strongest level whose encoder still keeps the WAN full. Two figures decide it.
//
//   - The link's drain rate: bytes the WAN socket delivered (TCP_INFO's bytes acked) per
//     second, the most seen recently (a decaying maximum). Bytes are acknowledged at the
//     narrowest hop's rate whenever a queue stands before it, so a backlogged interval
//     reads the link's rate, and an interval with spare room reads less (the load): the
//     maximum keeps the former. Acked bytes cannot overshoot the way bytes written can
//     (socket buffer and qdisc absorb the first second's writes). At level L the link
//     drains raw bytes at that rate times L's ratio.
//   - Each level's encode speed: a calibration encodes a sample of the link's own recent
//     bytes at every level on a locked thread, timed in thread CPU time (calibrate.go), so
//     the figures are the levels' relative costs on this traffic, not the box's load. The
//     current level's live speed (raw bytes per second of wall time spent encoding, where
//     the encoder runs, preemption included) against its calibrated speed says how much of
//     a CPU the encoder really gets (avail); other levels' speeds are scaled by the same.
//
// The policy picks the strongest level whose speed is at least levelKeep × the raw rate
// the link drains at that level (the encoder then is busy at most 1/levelKeep of the time
// at full link), keeps the current one while it still makes levelHoldK ×, and steps down
// at once when the encoder is busy more than levelDown of the wall time; a level left that
// way is not tried again for levelRetry. While the link stays backlogged (most TCP_INFO
// samples of the last decision interval show a queue) the encoder is keeping up, whatever
// its busy share or the estimates say (on a shared CPU the encoder's wall time includes
// its preemptions): then the level only moves up, and an encoder busy less than levelProbe
// tries the next level. A tried level the policy leaves again, for whatever reason, is not
// tried again for levelRetry: at 20 Mbit/s level 11 left the link unqueued (so the
// estimates stepped back to 7) and the next backlogged second tried it again, 7 and 11
// alternating every 4 s for a whole minute (docs/bench-tunnel.md). A change of level starts
// a new zstd stream and loses the history, so a new level is held at least levelHold.
//
// The levels are klauspost's four encoders. Level 11 (best) is several times slower than
// 7, so it fits only slow links; the calibration decides where.
var adaptLevels = []int{1, 3, 7, 11}

const (
	// levelEvery is the least time between two level decisions.
	levelEvery = time.Second
	// levelHold is the least time a new level is kept (unless the encoder is the bottleneck).
	levelHold = 3 * time.Second
	// levelKeep: a level is chosen when its speed is at least this many times the raw
	// rate the link drains at it.
	levelKeep = 2.0
	// levelHoldK: the current level is kept while its speed is at least this multiple.
	levelHoldK = 1.25
	// levelDown: step down when the encoder is busy more than this share of the wall time.
	levelDown = 0.6
	// levelProbe: on a backlogged link an encoder busy less than this share of the wall time
	// tries the next level even where the estimates say it does not fit. The estimates
	// scale the current level's live speed by calibrated speeds, and from level 1 they
	// over-predicted level 7's busy share about 2x at 20 Mbit/s (a frame's fixed cost weighs
	// more at the fastest level; one calibration pass per level on a loaded VM read level 1
	// at 2.3 to 7.0 times level 3): a link stayed at level 1, busy 12-15%, for a minute while
	// its twin ran at 7, busy ~50% (docs/bench-tunnel.md). A level too slow for the link
	// stops it being backlogged and steps back down (levelDown) for levelRetry.
	levelProbe = 0.25
	// levelRetry: how long a level stays out of reach once stepped down from for a busy
	// encoder, or once left after levelProbe's try reached it.
	levelRetry = time.Minute
	// levelMinLive is how many raw bytes the current level must have encoded before its
	// live speed and ratio are trusted; before that avail is availGuess and the ratio the
	// calibration's.
	levelMinLive = 64 << 10
	// availGuess: the share of a CPU assumed for the encoder before it is measured (a
	// tunnel end usually shares its cores with the database or the clients).
	availGuess = 0.5
	// liveDecay: the current level's live figures are multiplied by this at each decision,
	// so they follow the traffic and the CPU load of the last few seconds.
	liveDecay = 0.8
	// linkEvery is the least span of one drain-rate sample; linkHalfLife ages the maximum.
	// Acknowledgements can arrive bunched (a delay line or a receiver short of CPU
	// releases a held batch at once): spans of half a second read up to 2.2× a 2 Mbit/s
	// link in the replication study, the maximum kept it, and the level stepped down from
	// 11 to 7 on a full link (docs/bench-tunnel.md). Two seconds average a bunch with the
	// stall before it.
	linkEvery    = 2 * time.Second
	linkHalfLife = 30 * time.Second
)

// levelCal is one level's calibration: raw bytes encoded per CPU second, and raw/encoded.
type levelCal struct {
	speed float64
	ratio float64
}

// levelPolicy picks the zstd level of a mux link's sender. One goroutine at a time uses it
// (the framer's holder).
type levelPolicy struct {
	idx int        // index in adaptLevels
	cal []levelCal // per adaptLevels entry; nil until the first calibration
	// live figures of the current level, decayed (liveDecay)
	liveRaw, liveWire, liveEnc float64
	intEnc                     float64 // encoder seconds since the last decision
	qYes, qAll                 int     // TCP_INFO samples since the last decision: queued, all
	last, changedAt            time.Time
	linkRate                   float64 // bytes/s, decaying maximum of the drain rate
	linkAcked                  uint64
	linkAt                     time.Time
	linkSpan                   time.Duration // least span of a drain-rate sample: linkEvery
	ceiling                    int           // adaptLevels index not to reach before ceilingTo
	ceilingTo                  time.Time
	tried                      bool // the current level was reached by levelProbe's try
	skipNext                   bool // the next frame is the first at a new level (observe)
}

func newLevelPolicy() *levelPolicy {
	return &levelPolicy{ceiling: len(adaptLevels), linkSpan: linkEvery}
}

// observe feeds one zstd frame: raw bytes in, frame bytes out and encoder time. The first
// frame at a new level is left out: it pays the new encoder's allocations (its history and
// match tables, tens to hundreds of ms with LongMuxWindow: BenchmarkFirstFrameAtLevel), a
// one-off that would read as an encoder busy all the time and step the level straight
// back down.
func (l *levelPolicy) observe(raw, wire int, enc time.Duration) {
	if l.skipNext {
		l.skipNext = false
		return
	}
	l.liveRaw += float64(raw)
	l.liveWire += float64(wire)
	l.liveEnc += enc.Seconds()
	l.intEnc += enc.Seconds()
}

// observeQueue feeds whether one TCP_INFO sample of the WAN socket showed a queue.
func (l *levelPolicy) observeQueue(queued bool) {
	l.qAll++
	if queued {
		l.qYes++
	}
}

// observeLink feeds the WAN socket's count of acknowledged bytes at now.
func (l *levelPolicy) observeLink(acked uint64, now time.Time) {
	if l.linkAt.IsZero() || acked < l.linkAcked {
		l.linkAcked, l.linkAt = acked, now
		return
	}
	dt := now.Sub(l.linkAt)
	if dt < l.linkSpan {
		return
	}
	rate := float64(acked-l.linkAcked) / dt.Seconds()
	aged := l.linkRate * math.Exp2(-dt.Seconds()/linkHalfLife.Seconds())
	l.linkRate = max(rate, aged)
	l.linkAcked, l.linkAt = acked, now
}

// calibrated sets the levels' calibration (one entry per adaptLevels entry).
func (l *levelPolicy) calibrated(c []levelCal) {
	if len(c) == len(adaptLevels) {
		l.cal = c
	}
}

// decide returns the level to use; changed reports a new level, why says what decided.
func (l *levelPolicy) decide(now time.Time) (level int, changed bool, why string) {
	if l.last.IsZero() {
		l.last = now
	}
	elapsed := now.Sub(l.last)
	if elapsed < levelEvery {
		return adaptLevels[l.idx], false, ""
	}
	busy := l.intEnc / elapsed.Seconds()
	backlogged := l.qAll > 0 && 2*l.qYes >= l.qAll
	l.intEnc, l.qYes, l.qAll, l.last = 0, 0, 0, now
	if now.After(l.ceilingTo) {
		l.ceiling = len(adaptLevels)
	}
	prev, tried := l.idx, false
	ready := l.cal != nil && l.linkRate > 0 && now.Sub(l.changedAt) >= levelHold
	switch {
	case backlogged:
		if ready {
			in := l.levelInputs()
			l.idx = max(l.idx, pickLevel(in))
			why = in.String() + ", link backlogged"
			if l.idx == prev && busy < levelProbe && l.idx+1 < min(len(adaptLevels), l.ceiling) && l.liveRaw >= levelMinLive {
				l.idx, tried = l.idx+1, true
				why = fmt.Sprintf("%s, encoder busy %.0f%%: trying the next level", why, busy*100)
			}
		}
	case busy > levelDown && l.idx > 0:
		l.idx--
		l.ceiling, l.ceilingTo = prev, now.Add(levelRetry)
		why = fmt.Sprintf("encoder busy %.0f%% and the link not backlogged", busy*100)
	case ready:
		in := l.levelInputs()
		l.idx = pickLevel(in)
		why = in.String()
	}
	l.liveRaw, l.liveWire, l.liveEnc = l.liveRaw*liveDecay, l.liveWire*liveDecay, l.liveEnc*liveDecay
	if l.idx == prev {
		return adaptLevels[l.idx], false, ""
	}
	if l.tried && l.idx < prev {
		l.ceiling, l.ceilingTo = min(l.ceiling, prev), now.Add(levelRetry)
		why += fmt.Sprintf("; level %d not tried again for %s", adaptLevels[prev], levelRetry)
	}
	l.tried = tried
	l.liveRaw, l.liveWire, l.liveEnc, l.changedAt, l.skipNext = 0, 0, 0, now, true
	return adaptLevels[l.idx], true, why
}

// levelInputs are the figures pickLevel decides from.
type levelInputs struct {
	cal       []levelCal
	cur       int     // current index
	ceiling   int     // indexes from here up are out of reach
	avail     float64 // share of a CPU the encoder gets: live speed / calibrated speed
	liveRatio float64 // the current level's live ratio (0: unmeasured)
	linkRate  float64 // bytes/s the link delivers
}

func (in levelInputs) String() string {
	return fmt.Sprintf("link drains %.0f KB/s, encoder gets %.2f of a CPU", in.linkRate/1e3, in.avail)
}

func (l *levelPolicy) levelInputs() levelInputs {
	in := levelInputs{cal: l.cal, cur: l.idx, ceiling: l.ceiling, avail: availGuess, linkRate: l.linkRate}
	if l.liveRaw >= levelMinLive && l.liveEnc > 0 && l.liveWire > 0 {
		if s := l.cal[l.idx].speed; s > 0 {
			in.avail = min(max(l.liveRaw/l.liveEnc/s, 0.02), 1)
		}
		in.liveRatio = l.liveRaw / l.liveWire
	}
	return in
}

// pickLevel returns the index of the level to use: the strongest below the ceiling whose
// speed is at least levelKeep × the raw rate the link drains at it, or the current one
// while it still makes levelHoldK × and nothing stronger qualifies.
func pickLevel(in levelInputs) int {
	fits := func(i int, k float64) bool {
		c := in.cal[i]
		ratio := c.ratio
		if in.liveRatio > 0 && in.cal[in.cur].ratio > 0 {
			ratio = in.liveRatio * c.ratio / in.cal[in.cur].ratio
		}
		return c.speed*in.avail >= k*in.linkRate*max(ratio, 1)
	}
	best := 0
	for i := 1; i < min(len(in.cal), in.ceiling); i++ {
		if fits(i, levelKeep) {
			best = i
		}
	}
	if best < in.cur && in.cur < in.ceiling && fits(in.cur, levelHoldK) {
		return in.cur
	}
	return best
}
