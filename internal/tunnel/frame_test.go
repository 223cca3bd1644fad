package tunnel

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// encodeStream frames msgs with the given per-message frame types, as one connection would.
func encodeStream(t testing.TB, msgs [][]byte, types []frameType) []byte {
	t.Helper()
	e := newFrameEncoder(DefaultLevel, 0)
	defer e.close()
	var wire []byte
	for i, m := range msgs {
		if err := e.begin(types[i%len(types)]); err != nil {
			t.Fatal(err)
		}
		// Feed in uneven pieces, as reads arrive.
		for len(m) > 0 {
			n := min(len(m), 1+len(m)/3)
			if err := e.add(m[:n]); err != nil {
				t.Fatal(err)
			}
			m = m[n:]
		}
		f, err := e.finish()
		if err != nil {
			t.Fatal(err)
		}
		wire = append(wire, f...)
	}
	return wire
}

// decodeStream returns the bytes delivered before the first error, and that error.
func decodeStream(wire []byte) ([]byte, error) {
	d := newFrameDecoder(bytes.NewReader(wire), MaxWindow)
	defer d.close()
	var out []byte
	for {
		_, p, err := d.next()
		if err != nil {
			return out, err
		}
		out = append(out, p...)
	}
}

func randomMsgs(r *rand.Rand, kind string) [][]byte {
	n := 1 + r.IntN(40)
	switch kind {
	case "readonly":
		_, resps := readOnlyTraffic(r, newTable(r, 300), 1+r.IntN(3))
		return resps
	case "binlog":
		return binlogTraffic(r, newTable(r, 300), 1+r.IntN(200))
	}
	msgs := make([][]byte, n)
	for i := range msgs {
		size := []int{1, 2, 100, 4096, 65535, 65536, 200_000}[r.IntN(7)]
		m := make([]byte, 1+r.IntN(size))
		if r.IntN(2) == 0 {
			for j := range m {
				m[j] = byte(r.Uint32())
			}
		} else {
			for j := range m {
				m[j] = "abcabd-0123"[r.IntN(11)]
			}
		}
		msgs[i] = m
	}
	return msgs
}

func TestFrameRoundTrip(t *testing.T) {
	modes := map[string][]frameType{
		"raw":   {frameRaw},
		"zstd":  {frameZstd},
		"mixed": {frameZstd, frameRaw, frameRaw, frameZstd, frameZstd},
	}
	for name, types := range modes {
		for _, kind := range []string{"random", "readonly", "binlog"} {
			t.Run(name+"/"+kind, func(t *testing.T) {
				for seed := range uint64(25) {
					r := rand.New(rand.NewPCG(seed, 7))
					msgs := randomMsgs(r, kind)
					got, err := decodeStream(encodeStream(t, msgs, types))
					if !errors.Is(err, io.EOF) {
						t.Fatalf("seed %d: decode: %v", seed, err)
					}
					if want := concat(msgs); !bytes.Equal(got, want) {
						t.Fatalf("seed %d: got %d bytes, want %d, content differs", seed, len(got), len(want))
					}
				}
			})
		}
	}
}

// TestFrameCorruptionRejected flips single bytes anywhere in a framed stream: decoding must
// fail, and whatever was delivered before the failure must be an untouched prefix.
func TestFrameCorruptionRejected(t *testing.T) {
	for _, types := range [][]frameType{{frameRaw}, {frameZstd}, {frameRaw, frameZstd}} {
		r := rand.New(rand.NewPCG(1, 2))
		msgs := binlogTraffic(r, newTable(r, 50), 20)
		want := concat(msgs)
		wire := encodeStream(t, msgs, types)
		for trial := range 300 {
			bad := bytes.Clone(wire)
			i := r.IntN(len(bad))
			bad[i] ^= byte(1 + r.IntN(255))
			got, err := decodeStream(bad)
			if errors.Is(err, io.EOF) {
				t.Fatalf("types %v trial %d: flipping byte %d of %d went unnoticed", types, trial, i, len(bad))
			}
			if !bytes.HasPrefix(want, got) {
				t.Fatalf("types %v trial %d: corrupted bytes delivered (flip at %d)", types, trial, i)
			}
		}
	}
}

func TestFrameHeaderLimits(t *testing.T) {
	tests := []struct {
		name string
		hdr  []byte
	}{
		{"unknown type", []byte{9, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0}},
		{"raw length mismatch", []byte{1, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0}},
		{"raw too large", []byte{1, 0x10, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0}},
		{"zstd wire far beyond bound", []byte{2, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}},
		{"end with payload", []byte{3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"empty raw frame", []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeStream(append(tt.hdr, make([]byte, 64)...))
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
		})
	}
}

// TestFrameLevelChange: a stream whose encoder changes level (and so starts a new zstd
// stream, frameZstdNew) between frames, mixed with raw frames, decodes to the same bytes;
// only the first zstd frame after each change is marked new.
func TestFrameLevelChange(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	msgs := binlogTraffic(r, newTable(r, 300), 200)[:400] // one pass over levels
	e := newFrameEncoder(0, 4<<20)
	defer e.close()
	levels := []int{1, 1, 3, 7, 7, 11, 1, 3}
	var wire, want []byte
	news := 0
	for i, m := range msgs {
		if i%50 == 0 {
			e.setLevel(levels[(i/50)%len(levels)])
		}
		typ := frameZstd
		if i%7 == 3 {
			typ = frameRaw
		}
		if err := e.begin(typ); err != nil {
			t.Fatal(err)
		}
		if err := e.add(m); err != nil {
			t.Fatal(err)
		}
		f, err := e.finish()
		if err != nil {
			t.Fatal(err)
		}
		if frameType(f[0]) == frameZstdNew {
			news++
		}
		wire = append(wire, f...)
		want = append(want, m...)
	}
	got, err := decodeStream(wire)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("decode: %v after %d bytes", err, len(got))
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("decoded %d bytes, want %d, content differs", len(got), len(want))
	}
	// New streams: the first zstd frame, and each change of klauspost encoder (1→3, 3→7,
	// 7→11, 11→1, 1→3): 1 + 5.
	if news != 6 {
		t.Fatalf("%d frames started a new zstd stream, want 6", news)
	}
}
