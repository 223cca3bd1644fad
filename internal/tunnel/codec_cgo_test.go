//go:build cgo

package tunnel

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCodecWithCgo: levels from libFromLevel up open libzstd streams, those below pure-Go
// ones; each libzstd level is its own encoder; parameters libzstd refuses are an error,
// not gozstd's panic; and libzstd's frames, flushed per message, decode with the
// receiver's decoder.
func TestCodecWithCgo(t *testing.T) {
	for _, tc := range []struct {
		level int
		lib   bool
	}{{1, false}, {9, false}, {10, true}, {16, true}, {22, true}} {
		s, err := codec.open(io.Discard, tc.level, 1<<20)
		if err != nil {
			t.Fatalf("level %d: %v", tc.level, err)
		}
		if _, lib := s.(libStream); lib != tc.lib {
			t.Errorf("level %d: libzstd %v, want %v", tc.level, lib, tc.lib)
		}
		s.Close()
	}
	if codec.same(13, 16) || !codec.same(16, 16) || !codec.same(3, 4) || codec.same(7, 11) {
		t.Error("codec.same: want each libzstd level an encoder of its own, pure-Go levels as klauspost maps them")
	}
	for _, bad := range []struct{ level, window int }{{23, 1 << 20}, {13, 3000}, {13, 512}} {
		if _, err := codec.open(io.Discard, bad.level, bad.window); err == nil || !strings.Contains(err.Error(), "libzstd") {
			t.Errorf("level %d window %d: err %v, want a libzstd parameter error", bad.level, bad.window, err)
		}
	}
	if !strings.Contains(Codec, "libzstd") {
		t.Errorf("Codec %q does not name libzstd", Codec)
	}

	r := rand.New(rand.NewPCG(41, 42))
	msgs := binlogTraffic(r, newTable(r, 200), 100)
	for _, level := range []int{11, 13, 16} {
		e := newFrameEncoder(level, 16<<20)
		wire := encodeFrames(t, e, msgs)
		e.close()
		got, err := decodeStream(wire)
		if want := bytes.Join(msgs, nil); !errors.Is(err, io.EOF) || !bytes.Equal(got, want) {
			t.Fatalf("level %d: decoded %d of %d bytes, err %v", level, len(got), len(want), err)
		}
	}
}
