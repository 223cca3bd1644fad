package tunnel

import (
	"bytes"
	"crypto/cipher"
	"io"
	"net"
	"sync/atomic"
	"testing"
)

// The seed corpus in testdata/fuzz/FuzzRecordOpen is the start of both directions of a
// real mux link under mutual TLS, in the link's own records, each with the key material the
// session's exporter gave that direction; FuzzRecordRoundTrip's seeds are real frames as
// plaintext. TestCaptureFuzzSeeds rewrites both (frame_fuzz_test.go has the command).
//
// Run the targets with: go test -run '^$' -fuzz '^FuzzRecordOpen$' ./internal/tunnel/
// (and '^FuzzRecordRoundTrip$').

// FuzzRecordOpen: whatever bytes arrive on a mux link's socket, under the key it was given,
// the record opener returns plaintext (never more bytes than arrived) or one error: the end
// of the input, or ErrCorrupt counted once as a failed record; every later read fails too.
// It never panics.
func FuzzRecordOpen(f *testing.F) {
	f.Fuzz(func(t *testing.T, key, wire []byte, readSize, chunk uint16) {
		var fails atomic.Int64
		c, err := newRecordConn(&pieceConn{b: wire, chunk: 1 + int(chunk)}, keysFrom(key), false, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.fails = &fails
		buf := make([]byte, 1+int(readSize))
		total, err := readRecords(c, buf)
		if total > len(wire) {
			t.Fatalf("opened %d bytes of plaintext from %d bytes", total, len(wire))
		}
		checkFrameError(t, err, fails.Load())
		if _, again := c.Read(buf); again == nil {
			t.Fatalf("a read after %v succeeded", err)
		}
	})
}

// FuzzRecordRoundTrip: plaintext sealed in writes of any size, with rekeys as often as
// every record, opens to the same bytes whatever the socket's and the reader's chunks;
// with one byte of the sealed stream changed, the reader gets a prefix of the plaintext
// and then ErrCorrupt (or, for a changed length, the end of the input inside a record),
// never a byte that was not sealed.
func FuzzRecordRoundTrip(f *testing.F) {
	f.Fuzz(func(t *testing.T, plain, cuts []byte, flipAt uint32, flipXor byte) {
		size := cutter(cuts)
		keys := fixedKeys(t)
		var wire bytes.Buffer
		w, err := newRecordConn(&sinkConn{w: &wire}, keys, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		w.rekeyEvery = 1 + uint64(size())%8
		for p := plain; len(p) > 0; {
			n := min(len(p), size())
			if _, err := w.Write(p[:n]); err != nil {
				t.Fatal(err)
			}
			p = p[n:]
		}
		b := wire.Bytes()
		flipped := flipXor != 0 && len(b) > 0
		if flipped {
			b[int(flipAt%uint32(len(b)))] ^= flipXor
		}
		var fails atomic.Int64
		r, err := newRecordConn(&pieceConn{b: b, chunk: size()}, keys, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.fails = &fails
		var got []byte
		for err == nil {
			buf := make([]byte, size())
			var n int
			n, err = r.Read(buf)
			got = append(got, buf[:n]...)
		}
		switch {
		case !bytes.HasPrefix(plain, got):
			t.Fatalf("opened %d bytes that are not a prefix of the %d sealed", len(got), len(plain))
		case !flipped && (err != io.EOF || len(got) != len(plain)):
			t.Fatalf("untouched records: %d of %d bytes, then %v", len(got), len(plain), err)
		case flipped && err == io.EOF:
			t.Fatalf("byte %d of %d changed, and the reader reached a clean end", flipAt%uint32(len(b)), len(b))
		}
		checkFrameError(t, err, fails.Load())
	})
}

// readRecords reads c into buf until an error; it returns the bytes read and the error.
func readRecords(c *recordConn, buf []byte) (int, error) {
	total := 0
	for {
		n, err := c.Read(buf)
		total += n
		if err != nil {
			return total, err
		}
	}
}

// keysFrom is a direction's key material (key and IV, padded or cut to length) as a
// recordKeys for epoch 0 in either direction; later epochs get keys derived from it.
func keysFrom(km []byte) recordKeys {
	base := make([]byte, recordKeyLen+recordIVLen)
	copy(base, km)
	return func(_ bool, epoch uint64) (cipher.AEAD, [recordIVLen]byte, error) {
		k := bytes.Clone(base)
		k[0] ^= byte(epoch)
		return recordCipher(k)
	}
}

// cutter returns sizes 1..65026 taken from cuts in turn (4096 when cuts is empty).
func cutter(cuts []byte) func() int {
	i := 0
	return func() int {
		if len(cuts) == 0 {
			return 4096
		}
		n := 1 + int(cuts[i%len(cuts)])*int(cuts[(i+1)%len(cuts)])
		i++
		return n
	}
}

// pieceConn is a socket that reads b in pieces of at most chunk bytes, then io.EOF.
type pieceConn struct {
	net.Conn
	b     []byte
	chunk int
}

func (c *pieceConn) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.chunk)], c.b)
	c.b = c.b[n:]
	return n, nil
}
