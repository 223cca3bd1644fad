package tunnel

import (
	"runtime"
	"time"
)

// A calibration measures what each level of the codec's ladder costs on the link's own traffic: the
// framer keeps the first calibSample raw bytes it sends (every calibEvery, a fresh sample),
// and a goroutine encodes them at each level on a thread of its own, timed in that
// thread's CPU time, so the figures compare the levels, not the box's load at the moment.
// The encoder meanwhile keeps sending; the result is picked up at the next frame.
const (
	calibSample = 256 << 10
	calibEvery  = time.Minute
	// calibWarm bytes are encoded once before the timed run, so each encoder's tables are
	// allocated outside it.
	calibWarm = 4 << 10
)

// calibrator collects a sample of the link's raw bytes and calibrates the levels on it.
// One goroutine at a time uses it (the framer's holder).
type calibrator struct {
	sample  []byte
	last    time.Time // when the last calibration started
	running bool
	out     chan []levelCal
}

func newCalibrator() *calibrator { return &calibrator{out: make(chan []levelCal, 1)} }

// add keeps p for the next sample while one is due, and starts the calibration once the
// sample is full.
func (c *calibrator) add(p []byte, now time.Time) {
	if c.running || (!c.last.IsZero() && now.Sub(c.last) < calibEvery) {
		return
	}
	if c.sample == nil {
		c.sample = make([]byte, 0, calibSample)
	}
	c.sample = append(c.sample, p[:min(len(p), calibSample-len(c.sample))]...)
	if len(c.sample) < calibSample {
		return
	}
	sample := c.sample
	c.sample, c.last, c.running = nil, now, true
	go func() { c.out <- calibrate(sample, codec.levels) }()
}

// poll returns a finished calibration, if any.
func (c *calibrator) poll() ([]levelCal, bool) {
	select {
	case cal := <-c.out:
		c.running = false
		return cal, true
	default:
		return nil, false
	}
}

// calibrate encodes sample at each level and returns each one's speed (raw bytes per
// second of thread CPU time) and ratio. Each level's stream is opened and fed the sample's
// first calibWarm bytes untimed (its tables are allocated there), then times the rest as
// the link encodes: written and flushed. A level whose encoder cannot be opened gets
// speed 0 (never chosen).
func calibrate(sample []byte, levels []int) []levelCal {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	out := make([]levelCal, len(levels))
	warm, timed := sample[:min(calibWarm, len(sample))], sample[min(calibWarm, len(sample)):]
	dst := &appendBuf{b: make([]byte, 0, len(sample)+len(sample)/8)}
	for i, lvl := range levels {
		enc, err := codec.open(dst, lvl, calibSample)
		if err != nil {
			continue
		}
		_, werr := enc.Write(warm)
		ferr := enc.Flush()
		dst.b = dst.b[:0]
		t0 := threadCPU()
		_, werr2 := enc.Write(timed)
		ferr2 := enc.Flush()
		dt := max(threadCPU()-t0, time.Microsecond)
		enc.Close()
		if werr != nil || ferr != nil || werr2 != nil || ferr2 != nil {
			continue
		}
		out[i] = levelCal{speed: float64(len(timed)) / dt.Seconds(), ratio: float64(len(timed)) / float64(max(len(dst.b), 1))}
	}
	return out
}
