package tunnel

import "time"

// The auto policy picks, group by group, raw or zstd frames, from two views of the WAN:
//
//   - A queue (queue.go): TCP_INFO of the WAN socket shows bytes held back in the socket or
//     an RTT standing above the path's minimum. The link is the bottleneck even when writes
//     return at once (request/response traffic the send buffer absorbs), so wire bytes
//     decide: zstd, unless it does not shrink this stream (ratio below minRatio) or the link
//     already delivers far faster than the encoder works; then raw, re-trying zstd now and
//     then.
//   - A blocked write (blockedWrite or longer). Both types are measured by raw bytes moved
//     per second of sender busy time (encoding plus writing): the better one is used and the
//     other re-tried for a few groups every exploreEvery, because the link, the data and the
//     CPU available change. Busy time, not wire rate, is compared, so a sender on a starved
//     CPU (or feeding a slow receiver) does not keep compressing just because its writes wait.
//
// With neither, the WAN is not the bottleneck and raw wins outright: compression would only
// add CPU and latency.
const (
	blockedWrite = time.Millisecond
	// staleRaw returns to raw after this long without a blocked write. It is long because
	// a wrong raw decision on a narrow link fills the socket buffer with raw bytes (seconds
	// of wire time) while a wrong zstd decision only costs CPU.
	staleRaw = 5 * time.Second
	// staleQueue returns to raw after this long without a queued sample. Shorter than
	// staleRaw: TCP_NOTSENT_LOWAT (wanLowat) bounds what a wrong raw decision queues, and
	// returning to raw is how auto learns that compression is no longer needed.
	staleQueue    = 2 * time.Second
	exploreEvery  = time.Second
	exploreGroups = 4
	decayEvery    = 500 * time.Millisecond
	queueGain     = 1.0 / 8
	queueMajority = 0.5
	// minRatio is the least raw/wire ratio worth compressing for on a queued link.
	minRatio = 1.1
	// deliveryWindow samples make the link-rate estimate: their least delivery rate. The
	// kernel's per-ACK delivery rate errs high, not low, on a shaped link with small
	// replies: on the lab's 20 mbit veth 40% of the samples read 40-110 MB/s between ones
	// of 0-8 MB/s, while an unshaped veth reads 0.7-1.4 GB/s throughout. Taking the last
	// sample made auto send most replies raw on the narrow link ("faster than the encoder").
	deliveryWindow = 16
	encMargin      = 8
	// ratioDecayEvery ages the ratio and encoder rate pickQueued judges by. Much slower
	// than decayEvery: the data's compressibility changes slowly, and fast-decaying figures
	// were judged on the few zstd groups explored after a raw spell, whose history is cold
	// (ratio ~1.03 against ~2 warm, tiny groups encoding at a fraction of the warm rate), so
	// one raw spell kept auto raw on a queued link.
	ratioDecayEvery = 10 * time.Second
	// warmRaw, warmGroups: the stream's first zstd groups, up to this many bytes or groups,
	// are left out of the figures pickQueued judges by. They compress against no history:
	// on the lab's 20 mbit link replies that reach ~3x warm read ~1.03 cold, and judging on
	// them kept auto mostly raw for ~10 s (TPS ramping 54 -> 160 while zstd mode took 2 s).
	// The group bound lets a stream of tiny messages (requests) be judged soon too.
	warmRaw    = 64 << 10
	warmGroups = 64
)

type modeSample struct {
	raw  float64 // raw bytes sent
	wire float64 // frame bytes they took
	enc  float64 // seconds spent encoding them
	busy float64 // seconds spent encoding and writing them
}

func (m modeSample) goodput() float64 {
	if m.busy <= 0 {
		return 0
	}
	return m.raw / m.busy
}

func (m modeSample) ratio() float64 {
	if m.wire <= 0 {
		return 0
	}
	return m.raw / m.wire
}

// encRate is raw bytes encoded per second of encoder time (0 when unmeasured).
func (m modeSample) encRate() float64 {
	if m.enc <= 0 {
		return 0
	}
	return m.raw / m.enc
}

func (m *modeSample) halve() { m.raw, m.wire, m.enc, m.busy = m.raw/2, m.wire/2, m.enc/2, m.busy/2 }

type autoPolicy struct {
	mode        Mode
	lastBlocked time.Time
	lastQueued  time.Time
	lastDecay   time.Time
	lastExplore time.Time
	exploring   int // groups left to send with the non-preferred type
	raw, z      modeSample
	zSeen       float64 // raw bytes ever sent as zstd, and in how many groups: the
	zGroups     int     // stream's warm-up (warmRaw, warmGroups)
	delivery    float64 // bytes/s the WAN socket delivers: least of recent samples
	deliveries  [deliveryWindow]float64
	probes      int        // samples seen
	zLong       modeSample // zstd groups, aged by ratioDecayEvery (busy unused)
	lastAge     time.Time
	queueScore  float64 // moving share of recent samples that showed a queue
	zstd        bool    // the last choice
	switches    int64
	// probed: the WAN socket is read by observeQueue. A write blocks only behind a socket
	// queue (notsent above TCP_NOTSENT_LOWAT, itself above queuedBytes), which the samples
	// see and can tell from a receiver that does not read; so blocked writes are ignored.
	probed bool
	// levelled: a levelPolicy picks the level from the encoder's measured speed against the
	// link's drain rate (level.go), so the encoder's speed against the kernel's delivery rate
	// is not judged here: that figure errs high on a narrow link (tens of MB/s read on a
	// 20 mbit one) and would send a well-compressing link raw.
	levelled bool
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

func (a *autoPolicy) bound(now time.Time) (queued, blocked bool) {
	queued = !a.lastQueued.IsZero() && now.Sub(a.lastQueued) <= staleQueue
	blocked = !a.lastBlocked.IsZero() && now.Sub(a.lastBlocked) <= staleRaw
	return queued, blocked
}

func (a *autoPolicy) pick(now time.Time) bool {
	queued, blocked := a.bound(now)
	if !queued && !blocked {
		return false
	}
	if now.Sub(a.lastDecay) > decayEvery {
		a.lastDecay = now
		a.raw.halve()
		a.z.halve()
	}
	if queued {
		return a.pickQueued(now)
	}
	gr, gz := a.raw.goodput(), a.z.goodput()
	switch {
	case gz == 0:
		return true // blocked and never measured: try compressing
	case gr == 0:
		return false
	}
	return a.explore(now, gz > gr)
}

// pickQueued decides by wire bytes: on a queued link every byte saved is link time saved.
func (a *autoPolicy) pickQueued(now time.Time) bool {
	if a.zLong.raw == 0 {
		return true // not measured on a warm stream yet: compress
	}
	// The encoder rate is timed on a shared, often preempted CPU, and the kernel's delivery
	// rate errs high even at its least (up to ~140 MB/s on the lab's 20 mbit link, against
	// 0.7-1.4 GB/s unshaped), so the encoder must fall far below it before raw wins.
	fastEnough := a.levelled || a.delivery <= encMargin*a.zLong.encRate()
	worth := a.zLong.ratio() >= minRatio && fastEnough
	if worth {
		a.exploring = 0 // no need to re-try raw: the queue itself says raw is too much
		return true
	}
	return a.explore(now, false)
}

// explore returns best, except for exploreGroups groups every exploreEvery.
func (a *autoPolicy) explore(now time.Time, best bool) bool {
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
	if write >= blockedWrite && !a.probed {
		a.lastBlocked = now
	}
	s := &a.raw
	if typ == frameZstd {
		s = &a.z
	}
	if typ == frameZstd {
		warm := a.zSeen >= warmRaw || a.zGroups >= warmGroups
		a.zSeen += float64(raw)
		a.zGroups++
		if warm {
			if now.Sub(a.lastAge) > ratioDecayEvery {
				a.lastAge = now
				a.zLong.halve()
			}
			a.zLong.raw += float64(raw)
			a.zLong.wire += float64(wire)
			a.zLong.enc += enc.Seconds()
		}
	}
	s.raw += float64(raw)
	s.wire += float64(wire)
	s.enc += enc.Seconds()
	s.busy += (enc + write).Seconds()
}

// observeQueue feeds one TCP_INFO sample of the WAN socket and reports whether it showed
// a queue. The link counts as queued while most recent samples (a moving share, queueGain
// per sample) say so: on a loaded host a single sample can show a spike (a delayed ACK or
// a descheduled peer stretches one RTT), while a narrow link shows its queue in almost all.
func (a *autoPolicy) observeQueue(s queueSample, now time.Time) bool {
	a.deliveries[a.probes%deliveryWindow] = s.delivery
	a.probes++
	a.delivery = s.delivery
	for _, d := range a.deliveries[:min(a.probes, deliveryWindow)] {
		a.delivery = min(a.delivery, d)
	}
	q := s.queued()
	x := 0.0
	if q {
		x = 1
	}
	a.queueScore += (x - a.queueScore) * queueGain
	if a.queueScore >= queueMajority {
		a.lastQueued = now
	}
	return q
}
