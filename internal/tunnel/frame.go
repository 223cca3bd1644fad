package tunnel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
)

// A frame on the WAN is a 13-byte header and a payload:
//
//	type(1) | payload length(4) | raw length(4) | CRC32C(4)
//
// The CRC covers the raw (decoded) bytes and then the first 9 header bytes, so a flipped
// bit in the payload, in the lengths or in the type is caught before anything is delivered.
const headerLen = 13

type frameType byte

const (
	frameRaw  frameType = 1 // payload is the raw bytes
	frameZstd frameType = 2 // payload is a flushed block run of the connection's zstd stream
	frameEnd  frameType = 3 // the sender's source reached EOF; no payload
	// frameZstdNew is a zstd frame that starts a new zstd stream (the sender created its
	// encoder, for the first time or at another level): the receiver resets its decoder.
	frameZstdNew frameType = 4
)

// isZstd reports whether frames of type t carry zstd payloads.
func (t frameType) isZstd() bool { return t == frameZstd || t == frameZstdNew }

var (
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
	// ErrCorrupt marks a frame that failed its length, decode or checksum checks.
	ErrCorrupt = errors.New("corrupt tunnel frame")
)

// appendBuf is the zstd encoder's destination: output lands right after the frame header.
type appendBuf struct{ b []byte }

func (a *appendBuf) Write(p []byte) (int, error) { a.b = append(a.b, p...); return len(p), nil }

// frameEncoder builds one frame at a time into a reused buffer. The zstd encoder is created
// on first use and kept, so its window spans all zstd frames, until setLevel changes it.
type frameEncoder struct {
	level  int // zstd level 1..22
	window int
	// longWindow, when set, is the window of the best encoder (levels 10-22) instead of
	// window: see LongMuxWindow.
	longWindow int
	enc        *zstd.Encoder
	fresh      bool // enc was created since the last zstd frame: the next one is frameZstdNew
	out        appendBuf
	typ        frameType
	raw        int
	crc        uint32
}

// newFrameEncoder encodes at level (0 = DefaultLevel) with a window of window bytes
// (0 = DefaultWindow).
func newFrameEncoder(level, window int) *frameEncoder {
	if level == 0 {
		level = DefaultLevel
	}
	if window == 0 {
		window = DefaultWindow
	}
	return &frameEncoder{level: level, window: window, out: appendBuf{b: make([]byte, 0, 64<<10)}}
}

// setLevel makes later zstd frames use level. A different encoder starts a new stream, so
// the history is lost: callers change levels rarely.
func (e *frameEncoder) setLevel(level int) {
	if zstd.EncoderLevelFromZstd(level) != zstd.EncoderLevelFromZstd(e.level) {
		e.close()
	}
	e.level = level
}

// windowSize is the window the encoder uses at its current level.
func (e *frameEncoder) windowSize() int {
	if e.longWindow > 0 && zstd.EncoderLevelFromZstd(e.level) == zstd.SpeedBestCompression {
		return e.longWindow
	}
	return e.window
}

// begin starts a frame of type t, dropping any previous frame bytes.
func (e *frameEncoder) begin(t frameType) error {
	e.typ, e.raw, e.crc = t, 0, 0
	e.out.b = append(e.out.b[:0], make([]byte, headerLen)...)
	if t == frameZstd && e.enc == nil {
		// Not WithLowerEncoderMem: its history buffer is the window plus one block, so the
		// encoder moves the whole window down every 128 KiB of input (with a 16 MiB window,
		// 128 bytes copied per byte encoded). Twice the window moves it once per window.
		enc, err := zstd.NewWriter(&e.out, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(e.level)),
			zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(e.windowSize()), zstd.WithEncoderCRC(false))
		if err != nil {
			return fmt.Errorf("create zstd encoder: %w", err)
		}
		e.enc, e.fresh = enc, true
	}
	return nil
}

// add appends raw bytes to the current frame.
func (e *frameEncoder) add(p []byte) error {
	e.raw += len(p)
	e.crc = crc32.Update(e.crc, castagnoli, p)
	if e.typ == frameZstd {
		if _, err := e.enc.Write(p); err != nil {
			return fmt.Errorf("zstd encode: %w", err)
		}
		return nil
	}
	e.out.b = append(e.out.b, p...)
	return nil
}

// finish flushes the encoder and fills the header; the frame is valid until the next begin.
func (e *frameEncoder) finish() ([]byte, error) {
	if e.typ == frameZstd {
		if err := e.enc.Flush(); err != nil {
			return nil, fmt.Errorf("zstd flush: %w", err)
		}
		if e.fresh {
			e.typ, e.fresh = frameZstdNew, false
		}
	}
	h := e.out.b[:headerLen]
	h[0] = byte(e.typ)
	binary.BigEndian.PutUint32(h[1:5], uint32(len(e.out.b)-headerLen))
	binary.BigEndian.PutUint32(h[5:9], uint32(e.raw))
	binary.BigEndian.PutUint32(h[9:13], crc32.Update(e.crc, castagnoli, h[:9]))
	return e.out.b, nil
}

// close releases the encoder.
func (e *frameEncoder) close() {
	if e.enc != nil {
		e.enc.Reset(nil)
		e.enc = nil
	}
}

// payloadSource feeds exactly one frame's payload to the zstd decoder. The sync decoder
// reads exact block sizes, so in a well-formed stream it never asks past a flushed frame;
// asking anyway means the frame was corrupt, and we fail instead of blocking.
type payloadSource struct{ b []byte }

func (s *payloadSource) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, fmt.Errorf("%w: zstd block runs past its frame", ErrCorrupt)
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}

// frameDecoder reads frames from r and returns checked raw bytes. Buffers are reused.
type frameDecoder struct {
	r       io.Reader
	hdr     [headerLen]byte
	payload []byte
	out     []byte
	src     payloadSource
	dec     *zstd.Decoder
	maxRaw  int
	// maxWindow is the largest zstd window a stream may declare (Config.recvWindow). The
	// decoder reserves twice the declared window for its history as soon as a block comes,
	// so the peer's word alone must not size it: 22 bytes declaring 256 MiB would take 512.
	maxWindow int
	// fails counts the frames that failed a check here (not the reader's own errors, such
	// as a record of the layer below failing its tag); nil: not counted.
	fails *atomic.Int64
}

// newFrameDecoder reads frames from r whose zstd streams declare a window of at most
// maxWindow bytes (at least 1KiB).
func newFrameDecoder(r io.Reader, maxWindow int) *frameDecoder {
	return &frameDecoder{r: r, maxRaw: MaxGroupSize, maxWindow: maxWindow}
}

// next returns the next frame's type and raw bytes (valid until the next call). A frameEnd
// has no bytes. io.EOF means the peer closed between frames.
func (d *frameDecoder) next() (frameType, []byte, error) {
	if _, err := io.ReadFull(d.r, d.hdr[:]); err != nil {
		return 0, nil, err
	}
	typ := frameType(d.hdr[0])
	wire := int(binary.BigEndian.Uint32(d.hdr[1:5]))
	raw := int(binary.BigEndian.Uint32(d.hdr[5:9]))
	want := binary.BigEndian.Uint32(d.hdr[9:13])
	switch {
	case typ == frameEnd && wire == 0 && raw == 0:
	case typ == frameRaw && wire == raw && raw > 0 && raw <= d.maxRaw:
	case typ.isZstd() && raw > 0 && raw <= d.maxRaw && wire > 0 && wire <= zstdBound(raw):
	default:
		return 0, nil, d.failed(fmt.Errorf("%w: header type=%d wire=%d raw=%d", ErrCorrupt, typ, wire, raw))
	}
	d.payload = grow(d.payload, wire)
	if _, err := io.ReadFull(d.r, d.payload); err != nil {
		return 0, nil, fmt.Errorf("read frame payload: %w", noEOF(err))
	}
	p := d.payload
	if typ.isZstd() {
		if err := d.decode(raw, typ == frameZstdNew); err != nil {
			return 0, nil, d.failed(err)
		}
		p = d.out
	}
	if got := crc32.Update(crc32.Update(0, castagnoli, p), castagnoli, d.hdr[:9]); got != want {
		return 0, nil, d.failed(fmt.Errorf("%w: checksum %08x, header says %08x", ErrCorrupt, got, want))
	}
	return typ, p, nil
}

// failed counts err when it is a failed check of the frame; it returns err.
func (d *frameDecoder) failed(err error) error {
	if d.fails != nil && errors.Is(err, ErrCorrupt) {
		d.fails.Add(1)
	}
	return err
}

// decode decodes the payload into raw bytes; fresh means the payload starts a new stream.
func (d *frameDecoder) decode(raw int, fresh bool) error {
	if d.dec == nil || fresh {
		if err := d.checkWindow(); err != nil {
			return err
		}
	}
	if d.dec == nil {
		// Not WithDecoderLowmem, for the same reason as the encoder: its history, the window
		// plus 1 MiB instead of twice the window, moves the whole window down every MiB
		// decoded. Not WithDecoderMaxMemory: on a stream it bounds only the window again (a
		// link's zstd stream is one zstd frame for the link's life, so it cannot bound the
		// output). WithDecoderMaxWindow refuses a zstd frame header past the first one's,
		// which checkWindow reads, before the decoder reserves its window.
		dec, err := zstd.NewReader(&d.src, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(false),
			zstd.WithDecoderMaxWindow(uint64(d.maxWindow)))
		if err != nil {
			return fmt.Errorf("create zstd decoder: %w", err)
		}
		d.dec = dec
	} else if fresh {
		if err := d.dec.Reset(&d.src); err != nil {
			return fmt.Errorf("reset zstd decoder: %w", err)
		}
	}
	d.src.b = d.payload
	d.out = grow(d.out, raw)
	if _, err := io.ReadFull(d.dec, d.out); err != nil {
		if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			return d.windowTooLarge(0)
		}
		return fmt.Errorf("%w: zstd decode: %v", ErrCorrupt, err)
	}
	if len(d.src.b) != 0 {
		return fmt.Errorf("%w: %d payload bytes left after decoding", ErrCorrupt, len(d.src.b))
	}
	return nil
}

// checkWindow refuses a zstd stream whose frame header, at the start of the payload,
// declares a window over maxWindow; a payload that does not start with a header is left to
// the decoder.
func (d *frameDecoder) checkWindow() error {
	var h zstd.Header
	if h.Decode(d.payload) != nil {
		return nil
	}
	w := h.WindowSize
	if h.SingleSegment {
		w = h.FrameContentSize // the whole frame is the window
	}
	if w > uint64(d.maxWindow) {
		return d.windowTooLarge(w)
	}
	return nil
}

// windowTooLarge is the error of a zstd frame declaring a window of declared bytes (0: not
// known) over maxWindow: what a peer whose --window is larger than this end's meets on its
// first compressed frame.
func (d *frameDecoder) windowTooLarge(declared uint64) error {
	size := "a window"
	if declared > 0 {
		size = "a " + FormatSize(int64(declared)) + " window"
	}
	return fmt.Errorf("%w: zstd frame declares %s, over the %s this end accepts (its --window, or the default for the layout): give both ends the same --window",
		ErrCorrupt, size, FormatSize(int64(d.maxWindow)))
}

func (d *frameDecoder) close() {
	if d.dec != nil {
		d.dec.Close()
		d.dec = nil
	}
}

// zstdBound is a generous upper bound of a flushed zstd run for raw bytes (frame header
// and block headers included), to reject absurd lengths before allocating.
func zstdBound(raw int) int { return raw + raw/128 + 1024 }

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// wireLen is the payload length of the last frame read.
func (d *frameDecoder) wireLen() uint32 { return binary.BigEndian.Uint32(d.hdr[1:5]) }
