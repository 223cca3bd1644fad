package tunnel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// oversizedWindow is a 22-byte frame: a tunnel header (a zstd frame that starts a stream, 9
// bytes on the wire for 1 raw byte) and the start of a zstd frame declaring a window of
// 1<<log bytes, with an empty last block. klauspost/compress/zstd reserves twice a frame's
// declared window for its history when the first block comes: with no bound of its own a
// decoder took 512 MiB for these 22 bytes at log 28. testdata/fuzz/FuzzFrameDecoder has it.
func oversizedWindow(log int) []byte {
	z := []byte{0x28, 0xb5, 0x2f, 0xfd, // zstd magic
		0x00,              // frame header descriptor: a window descriptor follows, no content size
		byte(log-10) << 3, // window descriptor: 1<<log bytes
		0x01, 0x00, 0x00}  // block header: the last block, raw, 0 bytes
	h := make([]byte, headerLen)
	h[0] = byte(frameZstdNew)
	binary.BigEndian.PutUint32(h[1:5], uint32(len(z)))
	binary.BigEndian.PutUint32(h[5:9], 1)
	binary.BigEndian.PutUint32(h[9:13], crc32.Update(crc32.Update(0, castagnoli, []byte{0}), castagnoli, h[:9]))
	return append(h, z...)
}

// allocated is how many bytes the process allocated on its heap while fn ran, freed or not.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// waitCorrupt waits (up to 5s) until end has closed a connection or mux link for malformed
// input: it counts it, then logs it.
func waitCorrupt(t *testing.T, end *running) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); end.Stats().Corrupt == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no connection closed for malformed input within 5s")
		}
	}
}

// heapBound is more than a tunnel end allocates to take and refuse one frame (buffers, a
// zstd decoder's tables), and less than the 2 MiB a decoder reserves for a 1 MiB window.
const heapBound = 2 << 20

// TestFrameDecoderWindowLimit: a decoder refuses a zstd stream declaring more than its
// window, as a failed check counted once and before reserving it, with an error naming
// --window and both sizes; a stream at its window decodes.
func TestFrameDecoderWindowLimit(t *testing.T) {
	var fails atomic.Int64
	var err error
	n := allocated(func() {
		d := newFrameDecoder(bytes.NewReader(oversizedWindow(28)), LongMuxWindow)
		d.fails = &fails
		_, _, err = d.next()
		d.close()
	})
	if !errors.Is(err, ErrCorrupt) || fails.Load() != 1 {
		t.Fatalf("a 256MiB window against a 128MiB limit: %v, counted %d, want a corrupt frame counted once", err, fails.Load())
	}
	for _, s := range []string{"--window", "256MiB", "128MiB"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %s", err, s)
		}
	}
	if n > heapBound {
		t.Errorf("refusing 22 bytes allocated %d bytes, want at most %d", n, heapBound)
	}

	msgs := chunk(bytes.Repeat([]byte("UPDATE sbtest1 SET k=k+1 WHERE id=4242; "), 2000), 4<<10)
	e := newFrameEncoder(DefaultLevel, 2<<20)
	wire := encodeFrames(t, e, msgs)
	e.close()
	for _, limit := range []int{2 << 20, 1 << 20} {
		d := newFrameDecoder(bytes.NewReader(wire), limit)
		var got []byte
		for {
			_, p, err := d.next()
			if err != nil {
				if limit == 2<<20 && !errors.Is(err, io.EOF) {
					t.Errorf("a 2MiB window against its own limit: %v", err)
				}
				if limit == 1<<20 && (len(got) > 0 || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "2MiB window, over the 1MiB")) {
					t.Errorf("a 2MiB window against a 1MiB limit: %d bytes, then %v; want a refusal of the first frame", len(got), err)
				}
				break
			}
			got = append(got, p...)
		}
		d.close()
	}
}

// TestMalformedWindowBoundsMemory: the 22-byte frame declaring a 256 MiB window, sent to a
// live exit at its defaults without TLS (what anyone who reaches the port can send), ends
// the connection it came on, mux link or a client's own, counted as a failed frame check,
// with a log line naming --window and both sizes, and the exit's process allocates no more
// than heapBound meanwhile (it allocated 512 MiB before its decoders were bounded).
func TestMalformedWindowBoundsMemory(t *testing.T) {
	for _, c := range []struct {
		hello string
		limit string // the exit's window on that layout, at its defaults
	}{{preface, "1MiB"}, {muxPreface, "128MiB"}} {
		t.Run(strings.TrimSpace(c.hello), func(t *testing.T) {
			var log bytes.Buffer // read once the exit has stopped (Serve waits for its connections)
			exit := startTunnel(t, Config{Role: Exit, To: echoServer(t),
				Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))})
			entry := startTunnel(t, Config{Role: Entry, To: exit.Addr().String()})
			r := dialRogue(t, entry, c.hello)
			frame := oversizedWindow(28)
			if len(frame) != 22 {
				t.Fatalf("the frame is %d bytes, want 22", len(frame))
			}
			var closed error
			n := allocated(func() {
				r.write(frame)
				closed = readsUntilClosed(r.sock, 5*time.Second)
			})
			if closed != nil {
				t.Fatalf("the exit kept the connection: %v", closed)
			}
			if f := waitFaults(exit, frameChecks, 1); f.FrameCheckFailures != 1 || f.RecordTagFailures+f.BinlogEventErrors != 0 {
				t.Errorf("faults %s, want one failed frame check", f)
			}
			if n > heapBound {
				t.Errorf("the exit's process allocated %d bytes for 22, want at most %d", n, heapBound)
			}
			waitCorrupt(t, exit) // then the line is logged: a stop before would be no fault
			entry.stop()
			exit.stop()
			line := ""
			for l := range strings.Lines(log.String()) {
				if strings.Contains(l, "corrupt frame") {
					line = l
				}
			}
			for _, s := range []string{"--window", "256MiB window", "over the " + c.limit} {
				if !strings.Contains(line, s) {
					t.Errorf("the exit's log line %q does not name %q:\n%s", line, s, log.String())
				}
			}
		})
	}
}

// TestSameWindowBothEnds: two ends given the same --window, not a default, carry data both
// ways, on a mux link (at the best encoder's level too, which then keeps to --window) and
// on connections of their own, with no frame refused. 4 MiB is over the per-connection
// default a receiver would accept without --window.
func TestSameWindowBothEnds(t *testing.T) {
	const window = 4 << 20
	for _, c := range []struct {
		mux   MuxMode
		level int
	}{{MuxOn, 1}, {MuxOn, 11}, {MuxOff, 3}} {
		t.Run(fmt.Sprintf("mux=%s,level=%d", c.mux, c.level), func(t *testing.T) {
			exit := startTunnel(t, Config{Role: Exit, To: echoServer(t), Compress: Zstd, Level: c.level, Window: window})
			entry := startTunnel(t, Config{Role: Entry, To: exit.Addr().String(), Compress: Zstd, Level: c.level, Mux: c.mux, Window: window})
			data := bytes.Repeat([]byte("INSERT INTO sbtest1 VALUES (4242, 'x-y-z'); "), 20000)
			if got := exchange(t, entry.Addr().String(), data); !bytes.Equal(got, data) {
				t.Fatalf("echo: %d bytes back, want %d", len(got), len(data))
			}
			for _, end := range []*running{entry, exit} {
				s := end.Stats()
				if s.Faults.FrameCheckFailures != 0 || s.Corrupt != 0 || s.Recv.ZstdFrames == 0 {
					t.Errorf("%s: %d zstd frames received, faults %s, corrupt %d", s.Role, s.Recv.ZstdFrames, s.Faults, s.Corrupt)
				}
				if c.mux == MuxOn && s.Mux.Window != window {
					t.Errorf("%s: mux window %d, want --window %d", s.Role, s.Mux.Window, window)
				}
			}
		})
	}
}

// TestMismatchedWindowFailsFast: an entry whose --window is larger than its exit's sends a
// first compressed frame the exit refuses: the client's connection ends at once (not a
// hang), and the exit's log says to give both ends the same --window, with both sizes.
func TestMismatchedWindowFailsFast(t *testing.T) {
	bothMux(t, func(t *testing.T, mux MuxMode) {
		var log bytes.Buffer
		exit := startTunnel(t, Config{Role: Exit, To: echoServer(t), Compress: Zstd, Window: 1 << 20,
			Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))})
		entry := startTunnel(t, Config{Role: Entry, To: exit.Addr().String(), Compress: Zstd, Mux: mux, Window: 4 << 20})
		c, err := net.Dial("tcp", entry.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write(bytes.Repeat([]byte("SELECT 1; "), 1000)); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := readsUntilClosed(c, 5*time.Second); err != nil {
			t.Fatalf("the client's connection still open after 5s: %v", err)
		}
		t.Logf("the client's connection ended %v after its first write", time.Since(start).Round(time.Millisecond))
		if f := waitFaults(exit, frameChecks, 1); f.FrameCheckFailures != 1 {
			t.Errorf("exit faults %s, want one failed frame check", f)
		}
		waitCorrupt(t, exit)
		entry.stop()
		exit.stop()
		if want := "4MiB window, over the 1MiB this end accepts (its --window, or the default for the layout): give both ends the same --window"; !strings.Contains(log.String(), want) {
			t.Errorf("the exit's log does not say %q:\n%s", want, log.String())
		}
	})
}
