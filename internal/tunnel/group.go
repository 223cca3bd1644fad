package tunnel

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// readSize is the most one source read takes; a group is one or more reads.
const readSize = 32 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, readSize); return &b }}

// sender carries one direction from a plain source to the WAN. A reader goroutine fills
// pooled buffers; the group loop closes a group when it reaches maxSize, when timeout has
// passed since its first byte, or as soon as no further read is ready (so a lone request
// pays no grouping delay). Frames are written back to back: nothing waits for an ack, and
// while a write waits on the WAN the reader keeps filling buffers, so groups grow exactly
// when the link is the bottleneck.
//
// Fast path: a read shorter than a buffer (a request, a small reply: nothing else was
// waiting in the socket) while the group loop holds no bytes is framed and written by the
// reader itself, saving the hand-off and a goroutine wake-up per message. pending counts
// buffers handed to the group loop and not yet written; only the reader raises it, so when
// the reader sees 0, every earlier byte is on the WAN and the group loop is parked on the
// data channel, touching neither the encoder nor the policy: ordering and the one zstd
// stream are kept. A full read (bulk data streaming) or a busy group loop takes the
// grouping path, so reading overlaps encoding and writing under load.
type sender struct {
	*framer
	src     io.Reader
	maxSize int
	rs      int // bytes per read
	timeout time.Duration

	free, data chan *[]byte
	pending    atomic.Int64 // buffers handed to the group loop, not yet written
	released   int64        // buffers the current group consumed (group loop only)
	readErr    error
	writeErr   error   // the reader's own (fast path) write failed
	cur        []byte  // unconsumed part of curBuf
	curBuf     *[]byte // buffer to hand back once cur is consumed
}

func newSender(src io.Reader, dst io.Writer, cfg Config, c *counters) *sender {
	rs := min(readSize, cfg.GroupMaxSize)
	nbuf := max(4, min(64, 2*cfg.GroupMaxSize/rs+2))
	s := &sender{
		framer: newFramer(dst, cfg, c), src: src, maxSize: cfg.GroupMaxSize, rs: rs, timeout: cfg.GroupTimeout,
		free: make(chan *[]byte, nbuf), data: make(chan *[]byte, nbuf),
	}
	for range nbuf {
		s.free <- bufPool.Get().(*[]byte)
	}
	return s
}

// run sends until the source ends (then it sends an end frame and returns nil) or fails.
// The reader goroutine is tracked by wg; it ends when the source is closed or fails.
func (s *sender) run(wg *sync.WaitGroup) error {
	done := make(chan struct{})
	defer close(done)
	defer s.framer.close()
	wg.Add(1)
	go s.read(done, wg)
	for {
		if s.curBuf == nil {
			b, ok := <-s.data
			if !ok {
				return s.finish()
			}
			s.cur, s.curBuf = *b, b
		}
		if err := s.group(); err != nil {
			return err
		}
	}
}

func (s *sender) read(done <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	defer close(s.data)
	for {
		var b *[]byte
		select {
		case b = <-s.free:
		case <-done:
			return
		}
		buf := (*b)[:s.rs]
		n, err := s.src.Read(buf)
		switch {
		case n > 0 && n < s.rs && s.pending.Load() == 0:
			werr := s.sendNow(buf[:n])
			s.free <- b
			if werr != nil {
				s.writeErr = werr
				return
			}
		case n > 0:
			*b = buf[:n]
			s.pending.Add(1)
			// The channels hold every buffer, so this send never blocks.
			s.data <- b
		default:
			s.free <- b
		}
		if err != nil {
			s.readErr = err
			return
		}
	}
}

// sendNow writes p as one frame of its own (the fast path; the reader owns the sender).
func (s *sender) sendNow(p []byte) error {
	typ, err := s.begin()
	if err != nil {
		return err
	}
	if err := s.add(typ, p); err != nil {
		return err
	}
	s.c.flushInline.Add(1)
	return s.flush(typ, flushIdle)
}

// group builds and writes one frame starting with s.cur.
func (s *sender) group() error {
	typ, err := s.begin()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(s.timeout)
	reason := flushIdle
	for {
		if err := s.take(typ); err != nil {
			return err
		}
		if s.enc.raw >= s.maxSize {
			reason = flushSize
			break
		}
		if time.Now().After(deadline) {
			reason = flushTimeout
			break
		}
		if !s.more() {
			break
		}
	}
	if err := s.flush(typ, reason); err != nil {
		return err
	}
	// Only now, with the group on the WAN, may the reader write on its own.
	s.pending.Add(-s.released)
	s.released = 0
	return nil
}

// take moves as much of s.cur as fits into the group.
func (s *sender) take(typ frameType) error {
	p := s.cur
	if room := s.maxSize - s.enc.raw; len(p) > room {
		p = p[:room]
	}
	if err := s.add(typ, p); err != nil {
		return err
	}
	s.cur = s.cur[len(p):]
	if len(s.cur) == 0 {
		s.release()
	}
	return nil
}

func (s *sender) release() {
	b := s.curBuf
	s.cur, s.curBuf = nil, nil
	s.released++
	s.free <- b
}

// more reports whether another read is ready now, giving the reader one chance to run.
func (s *sender) more() bool {
	for i := 0; i < 2; i++ {
		select {
		case b, ok := <-s.data:
			if !ok {
				return false
			}
			s.cur, s.curBuf = *b, b
			return true
		default:
		}
		runtime.Gosched()
	}
	return false
}

// flush writes the group as one frame.
func (s *sender) flush(typ frameType, reason flushReason) error {
	return s.framer.flush(typ, reason, s.enc.raw)
}

// finish runs once the reader stopped: EOF means a clean end (tell the peer), anything
// else is the connection failing.
func (s *sender) finish() error {
	if s.writeErr != nil {
		return s.writeErr
	}
	if !errors.Is(s.readErr, io.EOF) {
		return fmt.Errorf("read from local peer: %w", s.readErr)
	}
	var end [headerLen]byte
	s.enc.typ, s.enc.raw, s.enc.crc = frameEnd, 0, 0
	s.enc.out.b = append(s.enc.out.b[:0], end[:]...)
	frame, _ := s.enc.finish()
	if _, err := s.dst.Write(frame); err != nil {
		return fmt.Errorf("write end frame to wan: %w", err)
	}
	s.c.send.wire.Add(int64(len(frame)))
	for range cap(s.free) {
		select {
		case b := <-s.free:
			bufPool.Put(b)
		default:
		}
	}
	return nil
}
