package tunnel

import (
	"runtime"
	"time"

	"github.com/klauspost/compress/zstd"
)

// A calibration measures what each of adaptLevels costs on the link's own traffic: the
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
	go func() { c.out <- calibrate(sample, adaptLevels) }()
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
// second of thread CPU time) and ratio. A level whose encoder cannot be made gets speed 0
// (never chosen).
func calibrate(sample []byte, levels []int) []levelCal {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	out := make([]levelCal, len(levels))
	dst := make([]byte, 0, len(sample)+len(sample)/8)
	for i, lvl := range levels {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(lvl)),
			zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(calibSample), zstd.WithEncoderCRC(false))
		if err != nil {
			continue
		}
		enc.EncodeAll(sample[:min(calibWarm, len(sample))], dst[:0])
		t0 := threadCPU()
		dst = enc.EncodeAll(sample, dst[:0])
		dt := max(threadCPU()-t0, time.Microsecond)
		_ = enc.Close()
		out[i] = levelCal{speed: float64(len(sample)) / dt.Seconds(), ratio: float64(len(sample)) / float64(max(len(dst), 1))}
	}
	return out
}
