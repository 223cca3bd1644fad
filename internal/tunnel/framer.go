package tunnel

import (
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"
)

type flushReason int

const (
	flushIdle flushReason = iota
	flushSize
	flushTimeout
)

// framer writes one direction's frames to the WAN: it picks each frame's type (the auto
// policy) and, on a mux link, its zstd level (levelPolicy), times the encoder and the
// write, and feeds the policies what each write and TCP_INFO sample showed. One goroutine
// at a time uses it: a sender's group loop or reader, or a mux link's writer.
type framer struct {
	dst       io.Writer
	enc       *frameEncoder
	policy    *autoPolicy
	probe     *wanProbe    // TCP_INFO of the WAN socket; nil without one
	level     *levelPolicy // nil: the level stays fixed
	cal       *calibrator  // with level: samples the traffic to calibrate the levels
	log       *slog.Logger // with level: level changes are logged
	c         *counters
	encDur    time.Duration
	started   time.Time // when the current frame began
	lastProbe time.Time
	rtt       rttFloor     // the WAN's round trip now, from the probe's samples
	srtt      atomic.Int64 // the last sample's smoothed RTT, ns: read by the link's receivers
}

func newFramer(dst io.Writer, cfg Config, c *counters) *framer {
	return &framer{dst: dst, enc: newFrameEncoder(cfg.Level, cfg.Window), policy: newAutoPolicy(cfg.Compress), c: c}
}

// begin picks the next frame's type and starts it.
func (f *framer) begin() (frameType, error) {
	before := f.policy.switches
	now := time.Now()
	f.started = now
	typ := f.policy.choose(now)
	if f.policy.switches != before {
		f.c.switches.Add(1)
	}
	if f.cal != nil {
		if cal, ok := f.cal.poll(); ok {
			f.level.calibrated(cal)
		}
	}
	if typ == frameZstd {
		if f.level != nil {
			if l, changed, why := f.level.decide(now); changed {
				f.enc.setLevel(l)
				f.c.window.Store(int64(f.enc.windowSize()))
				f.c.levelChanges.Add(1)
				f.logLevel(l, why)
			}
		}
		f.c.level.Store(int64(f.enc.level))
	}
	f.encDur = 0
	return typ, f.enc.begin(typ)
}

// add appends p to the frame, timing the encoder for the policies.
func (f *framer) add(typ frameType, p []byte) error {
	if f.cal != nil {
		f.cal.add(p, f.started)
	}
	if typ != frameZstd {
		return f.enc.add(p)
	}
	t0 := time.Now()
	err := f.enc.add(p)
	f.encDur += time.Since(t0)
	return err
}

// flush finishes the frame and writes it; raw is what the stats count as its raw bytes
// (the local peer's bytes it carries).
func (f *framer) flush(typ frameType, reason flushReason, raw int) error {
	t0 := time.Now()
	frame, err := f.enc.finish()
	if err != nil {
		return err
	}
	t1 := time.Now()
	if typ == frameZstd {
		f.encDur += t1.Sub(t0)
	}
	if _, err := f.dst.Write(frame); err != nil {
		return fmt.Errorf("write frame to wan: %w", err)
	}
	t2 := time.Now()
	f.c.send.frame(typ, raw, len(frame))
	switch reason {
	case flushSize:
		f.c.flushSize.Add(1)
	case flushTimeout:
		f.c.flushTimeout.Add(1)
	default:
		f.c.flushIdle.Add(1)
	}
	f.policy.observe(typ, f.enc.raw, len(frame), f.encDur, t2.Sub(t1), t2)
	if typ == frameZstd && f.level != nil {
		f.level.observe(f.enc.raw, len(frame), f.encDur)
	}
	if f.probe != nil && t2.Sub(f.lastProbe) >= probeEvery {
		f.lastProbe = t2
		if q, ok := f.probe.sample(); ok {
			queued := f.policy.observeQueue(q, t2)
			f.c.probed(q, queued)
			f.rtt.add(q.srtt, t2)
			f.srtt.Store(int64(q.srtt))
			if f.level != nil {
				f.level.observeQueue(queued)
				f.level.observeLink(q.acked, t2)
				f.c.linkRate.Store(int64(f.level.linkRate))
			}
		}
	}
	return nil
}

// logLevel reports a level change with the figures behind it.
func (f *framer) logLevel(level int, why string) {
	if f.log == nil {
		return
	}
	f.log.Info("tunnel zstd level", "level", level, "why", why)
}

// close releases the encoder.
func (f *framer) close() { f.enc.close() }
