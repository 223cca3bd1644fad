package tunnel

import "time"

// The auto policy picks, group by group, the frame type that moves more raw bytes per
// second of sender busy time (encoding plus writing to the WAN). While writes return at
// once the WAN is not the bottleneck and raw wins outright (compression would only add CPU
// and latency), so zstd is only tried after a write had to wait (blockedWrite or longer).
// Then both types are measured: the better one is used and the other re-tried for a few
// groups every exploreEvery, because the link, the data and the CPU available change.
// Busy time, not wire rate, is compared, so a sender on a starved CPU (or feeding a slow
// receiver) does not keep compressing just because its writes wait.
const (
	blockedWrite = time.Millisecond
	// staleRaw returns to raw after this long without a blocked write. It is long because
	// a wrong raw decision on a narrow link fills the socket buffer with raw bytes (seconds
	// of wire time) while a wrong zstd decision only costs CPU.
	staleRaw      = 5 * time.Second
	exploreEvery  = time.Second
	exploreGroups = 4
	decayEvery    = 500 * time.Millisecond
)

type modeSample struct {
	raw  float64 // raw bytes sent
	busy float64 // seconds spent encoding and writing them
}

func (m modeSample) goodput() float64 {
	if m.busy <= 0 {
		return 0
	}
	return m.raw / m.busy
}

type autoPolicy struct {
	mode        Mode
	lastBlocked time.Time
	lastDecay   time.Time
	lastExplore time.Time
	exploring   int // groups left to send with the non-preferred type
	raw, z      modeSample
	zstd        bool // the last choice
	switches    int64
}

func newAutoPolicy(m Mode) *autoPolicy { return &autoPolicy{mode: m} }

// choose is the frame type of the next group.
func (a *autoPolicy) choose(now time.Time) frameType {
	switch a.mode {
	case Off:
		return frameRaw
	case Zstd:
		return frameZstd
	}
	z := a.pick(now)
	if z != a.zstd {
		a.zstd = z
		a.switches++
	}
	if z {
		return frameZstd
	}
	return frameRaw
}

func (a *autoPolicy) pick(now time.Time) bool {
	if a.lastBlocked.IsZero() || now.Sub(a.lastBlocked) > staleRaw {
		return false
	}
	if now.Sub(a.lastDecay) > decayEvery {
		a.lastDecay = now
		a.raw.raw, a.raw.busy, a.z.raw, a.z.busy = a.raw.raw/2, a.raw.busy/2, a.z.raw/2, a.z.busy/2
	}
	gr, gz := a.raw.goodput(), a.z.goodput()
	switch {
	case gz == 0:
		return true // blocked and never measured: try compressing
	case gr == 0:
		return false
	}
	best := gz > gr
	if a.exploring > 0 {
		a.exploring--
		return !best
	}
	if now.Sub(a.lastExplore) > exploreEvery {
		a.lastExplore = now
		a.exploring = exploreGroups - 1
		return !best
	}
	return best
}

// observe feeds one written frame: raw and wire sizes, time spent encoding and writing.
func (a *autoPolicy) observe(typ frameType, raw, wire int, enc, write time.Duration, now time.Time) {
	if write >= blockedWrite {
		a.lastBlocked = now
	}
	s := &a.raw
	if typ == frameZstd {
		s = &a.z
	}
	s.raw += float64(raw)
	s.busy += (enc + write).Seconds()
}
