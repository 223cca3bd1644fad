package tunnel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"sync/atomic"
	"testing"
)

// The seed corpus in testdata/fuzz/FuzzFrameDecoder is the start of real WAN connections:
// the frames each direction of a mux link carried under sysbench (zstd) and a binlog dump
// (binlog records), and both directions of a client's connection without the mux. It is
// rewritten, with every other fuzz target's seeds, by a run against a real MariaDB (root):
//
//	go test -tags capture -run TestCaptureFuzzSeeds ./internal/tunnel/
//
// window-256MiB is the 22-byte frame whose declared window a decoder once reserved twice
// over (oversizedWindow). The decoder here accepts DefaultMuxWindow, the window of the
// seeds' streams: an end's bound (Config.recvWindow), small enough that an input declaring
// up to it, which the decoder reserves twice, keeps each run short.
//
// Run the target with: go test -run '^$' -fuzz '^FuzzFrameDecoder$' ./internal/tunnel/

// FuzzFrameDecoder: whatever bytes arrive on a WAN connection, the frame decoder returns
// frames whose raw bytes match their header's length and CRC, or one error: the end of the
// input, or ErrCorrupt counted once as a failed check. It never panics.
func FuzzFrameDecoder(f *testing.F) {
	f.Fuzz(func(t *testing.T, wire []byte) {
		var fails atomic.Int64
		d := newFrameDecoder(bytes.NewReader(wire), DefaultMuxWindow)
		d.fails = &fails
		defer d.close()
		for {
			typ, p, err := d.next()
			if err != nil {
				checkFrameError(t, err, fails.Load())
				return
			}
			h := d.hdr[:]
			if int(binary.BigEndian.Uint32(h[5:9])) != len(p) {
				t.Fatalf("frame type %d: %d raw bytes, header says %d", typ, len(p), binary.BigEndian.Uint32(h[5:9]))
			}
			if typ == frameEnd && len(p) != 0 {
				t.Fatalf("end frame with %d bytes", len(p))
			}
			if crc := crc32.Update(crc32.Update(0, castagnoli, p), castagnoli, h[:9]); crc != binary.BigEndian.Uint32(h[9:13]) {
				t.Fatalf("frame type %d delivered with CRC %08x, header says %08x", typ, crc, binary.BigEndian.Uint32(h[9:13]))
			}
			if fails.Load() != 0 {
				t.Fatalf("a failure counted before the decoder returned one")
			}
		}
	})
}

// checkFrameError: err ends a decoder's input; a failed check is counted once, the end of
// the input not at all.
func checkFrameError(t *testing.T, err error, counted int64) {
	t.Helper()
	switch {
	case errors.Is(err, ErrCorrupt):
		if counted != 1 {
			t.Fatalf("%v counted %d times, want once", err, counted)
		}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		if counted != 0 {
			t.Fatalf("the end of the input (%v) counted as %d failed checks", err, counted)
		}
	default:
		t.Fatalf("decoder error %v is neither corruption nor the end of the input", err)
	}
}
