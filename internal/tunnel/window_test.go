package tunnel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// encodeFrames frames msgs as zstd frames with e and returns the wire bytes.
func encodeFrames(t testing.TB, e *frameEncoder, msgs [][]byte) []byte {
	t.Helper()
	var wire []byte
	for _, m := range msgs {
		if err := e.begin(frameZstd); err != nil {
			t.Fatal(err)
		}
		if err := e.add(m); err != nil {
			t.Fatal(err)
		}
		f, err := e.finish()
		if err != nil {
			t.Fatal(err)
		}
		wire = append(wire, f...)
	}
	return wire
}

// chunk cuts b into pieces of n bytes (the last one shorter).
func chunk(b []byte, n int) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		k := min(n, len(b))
		out = append(out, b[:k])
		b = b[k:]
	}
	return out
}

// TestLongWindowAtBestLevel: the best encoder uses longWindow, so bytes repeated from
// further back than the short window are sent as references, and the stream still decodes
// to the same bytes; the weaker encoders keep the short window.
func TestLongWindowAtBestLevel(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	old := digitGroups(r, 24<<10) // ~288 KiB of sysbench-like digits
	mid := digitGroups(r, 48<<10) // ~576 KiB more: pushes old out of a 256 KiB window
	stream := append(append(append([]byte{}, old...), mid...), old...)
	msgs := chunk(stream, 4<<10)
	repeat := len(old) + len(mid) // where the repeated copy starts

	for _, tc := range []struct {
		level    int
		long     bool // the repeat must compress far better than fresh digits
		wantWind int
	}{
		{11, true, 2 << 20},
		{7, false, 256 << 10},
	} {
		e := newFrameEncoder(tc.level, 256<<10)
		e.longWindow = 2 << 20
		if got := e.windowSize(); got != tc.wantWind {
			t.Fatalf("level %d: window %d, want %d", tc.level, got, tc.wantWind)
		}
		wire := encodeFrames(t, e, msgs)
		e.close()
		got, err := decodeStream(wire)
		if !errors.Is(err, io.EOF) || !bytes.Equal(got, stream) {
			t.Fatalf("level %d: decoded %d of %d bytes, err %v", tc.level, len(got), len(stream), err)
		}
		// Wire bytes of the repeated part: the frames after the repeat's start.
		tail := 0
		for off, p := 0, wire; len(p) > 0; {
			n := headerLen + int(binary.BigEndian.Uint32(p[1:5]))
			if off >= repeat {
				tail += n
			}
			off += int(binary.BigEndian.Uint32(p[5:9]))
			p = p[n:]
		}
		ratio := float64(len(old)) / float64(tail)
		t.Logf("level %d, window %d KiB: repeated part %.1fx", tc.level, e.windowSize()>>10, ratio)
		if tc.long && ratio < 10 {
			t.Fatalf("level %d: the repeat compressed %.1fx: the long window did not reach back", tc.level, ratio)
		}
		if !tc.long && ratio > 3 {
			t.Fatalf("level %d: the repeat compressed %.1fx with the short window, beyond what digits alone give", tc.level, ratio)
		}
	}
}

// captureFrames reads a binlog file (as mariadb writes it) and returns its events as the
// replication protocol sends them (packet header and OK byte before each), cut into
// frames of at least minFrame bytes at transaction ends (XID events).
func captureFrames(b []byte, minFrame int) (frames [][]byte, raw int) {
	const xidEvent = 16
	b = b[4:] // the binlog magic
	var cur []byte
	seq := byte(1)
	for len(b) >= 19 {
		n := int(binary.LittleEndian.Uint32(b[9:13]))
		if n < 19 || n > len(b) {
			break
		}
		ev := b[:n]
		b = b[n:]
		l := n + 1
		cur = append(cur, byte(l), byte(l>>8), byte(l>>16), seq, 0)
		seq++
		cur = append(cur, ev...)
		if ev[4] == xidEvent && len(cur) >= minFrame {
			frames = append(frames, cur)
			raw += len(cur)
			cur = nil
		}
	}
	return frames, raw
}

// BenchmarkCaptureWindow encodes a captured binlog stream (scripts/capture-binlog.sh; set
// WIRELAB_BINLOG_CAPTURE to its directory) as a mux link's writer would: frames of ~4 KiB
// (an event group each) or larger, up to 256 KiB (what a backlogged link with a larger
// --group-max-size would send), at a level and window, with or without the table's rows
// (the sysbench prepare) sent before it, as a link that carried them earlier would have,
// and with the exit's binlog recoding (binlog.go) or without. It reports the ratio of raw
// bytes to frame bytes (frame and record headers included).
func BenchmarkCaptureWindow(b *testing.B) {
	dir := os.Getenv("WIRELAB_BINLOG_CAPTURE")
	if dir == "" {
		b.Skip("set WIRELAB_BINLOG_CAPTURE to a directory from scripts/capture-binlog.sh")
	}
	work, err := os.ReadFile(filepath.Join(dir, "write.binlog"))
	if err != nil {
		b.Fatal(err)
	}
	prep, err := os.ReadFile(filepath.Join(dir, "prepare.binlog"))
	if err != nil {
		b.Fatal(err)
	}
	for _, frame := range []int{4 << 10, 16 << 10, 64 << 10, 256 << 10} {
		frames, raw := captureFrames(work, frame)
		prepFrames, _ := captureFrames(prep, 64<<10)
		for _, c := range []struct {
			name   string
			level  int
			window int
			hist   bool
			recode bool
		}{
			{"level7-16MiB", 7, 16 << 20, true, false},
			{"level11-16MiB", 11, 16 << 20, false, false},
			{"level11-16MiB-history", 11, 16 << 20, true, false},
			{"level11-128MiB", 11, 128 << 20, false, false},
			{"level11-128MiB-history", 11, 128 << 20, true, false},
			{"level11-128MiB-recode", 11, 128 << 20, false, true},
			{"level11-128MiB-history-recode", 11, 128 << 20, true, true},
		} {
			b.Run(FormatSize(int64(frame))+"/"+c.name, func(b *testing.B) {
				b.SetBytes(int64(raw))
				var wire int
				for b.Loop() {
					e := newFrameEncoder(c.level, c.window)
					hist, work := [][]byte{prep}, frames
					if c.recode {
						hist, work = recodeFrames(prepFrames), recodeFrames(frames)
					}
					if c.hist {
						for _, h := range hist {
							encodeFrames(b, e, chunk(h, 64<<10))
						}
					}
					wire = 0
					for _, f := range work {
						if err := e.begin(frameZstd); err != nil {
							b.Fatal(err)
						}
						e.add(f)
						out, err := e.finish()
						if err != nil {
							b.Fatal(err)
						}
						wire += len(out) + recHeaderLen
					}
					e.close()
				}
				b.ReportMetric(float64(raw)/float64(wire), "ratio")
			})
		}
	}
}

// recodeFrames returns copies of frames with their event packets recoded as an armed exit
// would (each frame one read: every packet whole).
func recodeFrames(frames [][]byte) [][]byte {
	e := &binlogEncoder{}
	e.armed.Store(true)
	out := make([][]byte, len(frames))
	for i, f := range frames {
		out[i] = append([]byte(nil), f...)
		e.recode(out[i], nil)
	}
	return out
}

// BenchmarkFirstFrameAtLevel times the first small frame of a new encoder against the
// next ones, at the best level with a mux link's long window and at level 7: the first
// pays the encoder's allocations (history and match tables), which is why the level policy
// leaves it out. It reports both in ms.
func BenchmarkFirstFrameAtLevel(b *testing.B) {
	msg := bytes.Repeat([]byte("binlog row 0123456789 "), 4<<10/22)
	for _, c := range []struct {
		name       string
		level      int
		longWindow int
	}{{"level11-128MiB", 11, LongMuxWindow}, {"level7-16MiB", 7, 0}} {
		b.Run(c.name, func(b *testing.B) {
			var first, next time.Duration
			for b.Loop() {
				e := newFrameEncoder(c.level, DefaultMuxWindow)
				e.longWindow = c.longWindow
				for i := range 2 {
					t0 := time.Now()
					encodeFrames(b, e, [][]byte{msg})
					if i == 0 {
						first += time.Since(t0)
					} else {
						next += time.Since(t0)
					}
				}
				e.close()
			}
			b.ReportMetric(float64(first.Microseconds())/1e3/float64(b.N), "first-ms")
			b.ReportMetric(float64(next.Microseconds())/1e3/float64(b.N), "next-ms")
		})
	}
}
