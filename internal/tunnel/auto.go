package tunnel

import "time"

// The auto policy compresses when the WAN write path is the bottleneck and compression
// would move more raw bytes per second than it costs. A write that had to wait
// (blockedWrite or longer) proves the WAN (or the peer) is draining slower than we produce,
// and its duration gives a drain-rate sample. Compressing pays when
//
//	rate < encoderSpeed × (1 − 1/ratio)
//
// i.e. the wire time saved per raw byte exceeds the encoder time spent on it. Without a
// recent blocked write we send raw: a fast WAN only pays CPU and latency for compression.
const (
	blockedWrite = time.Millisecond
	// staleRaw ends a zstd decision after this long without a blocked write. It is long
	// because a wrong raw decision on a narrow link fills the socket buffer with raw
	// bytes (seconds of wire time) while a wrong zstd decision only costs CPU.
	staleRaw = 5 * time.Second
	// assumedEncSpeed and assumedRatio seed the model before the first zstd group.
	assumedEncSpeed = 200e6
	assumedRatio    = 2.0
	ewmaKeep        = 0.8
)

type autoPolicy struct {
	mode        Mode
	rate        float64 // wire bytes/s from blocked writes
	lastBlocked time.Time
	encSpeed    float64 // raw bytes/s through the encoder
	ratio       float64 // raw/wire of zstd frames
	zstd        bool
	switches    int64
}

func newAutoPolicy(m Mode) *autoPolicy {
	return &autoPolicy{mode: m, encSpeed: assumedEncSpeed, ratio: assumedRatio}
}

// choose is the frame type of the next group.
func (a *autoPolicy) choose(now time.Time) frameType {
	switch a.mode {
	case Off:
		return frameRaw
	case Zstd:
		return frameZstd
	}
	z := a.pays(now)
	if z != a.zstd {
		a.zstd = z
		a.switches++
	}
	if z {
		return frameZstd
	}
	return frameRaw
}

func (a *autoPolicy) pays(now time.Time) bool {
	if a.lastBlocked.IsZero() || now.Sub(a.lastBlocked) > staleRaw {
		return false
	}
	gain := 1 - 1/a.ratio
	return gain > 0 && a.rate < a.encSpeed*gain
}

// observe feeds one written frame: raw and wire sizes, time spent encoding and writing.
func (a *autoPolicy) observe(typ frameType, raw, wire int, enc, write time.Duration, now time.Time) {
	if write >= blockedWrite {
		a.rate = ewma(a.rate, float64(wire)/write.Seconds())
		a.lastBlocked = now
	}
	if typ == frameZstd && raw >= 4096 && wire > 0 {
		if enc > 0 {
			a.encSpeed = ewma(a.encSpeed, float64(raw)/enc.Seconds())
		}
		a.ratio = ewma(a.ratio, float64(raw)/float64(wire))
	}
}

func ewma(old, sample float64) float64 {
	if old == 0 {
		return sample
	}
	return ewmaKeep*old + (1-ewmaKeep)*sample
}
