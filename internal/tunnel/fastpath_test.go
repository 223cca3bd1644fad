package tunnel

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// scriptedSource returns data in reads of scripted sizes: mostly short (the fast path) with
// runs of full reads (handed to the group loop), so both paths interleave on one stream.
type scriptedSource struct {
	data []byte
	r    *rand.Rand
}

func (s *scriptedSource) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	n := len(p)
	if s.r.IntN(10) < 7 {
		n = 1 + s.r.IntN(600)
	}
	n = copy(p, s.data[:min(n, len(s.data))])
	s.data = s.data[n:]
	return n, nil
}

// laggyWAN records frames and now and then stalls, so the group loop is often still busy
// when a short read arrives. No lock on purpose: the fast path must hand the writer over
// with a happens-before edge, and -race reports it if it does not.
type laggyWAN struct {
	buf    bytes.Buffer
	writes int
	failAt int // fail this write (1-based); 0 = never
}

func (w *laggyWAN) Write(p []byte) (int, error) {
	w.writes++
	if w.failAt > 0 && w.writes >= w.failAt {
		return 0, errors.New("wan gone")
	}
	if w.writes%5 == 0 {
		time.Sleep(200 * time.Microsecond)
	}
	return w.buf.Write(p)
}

func runSender(t *testing.T, src io.Reader, dst io.Writer, mode Mode) (*counters, error) {
	t.Helper()
	cfg := Config{Compress: mode, Level: DefaultLevel, GroupMaxSize: 16 << 10, GroupTimeout: DefaultGroupTimeout}
	c := &counters{}
	s := newSender(src, dst, cfg, c)
	var wg sync.WaitGroup
	err := s.run(&wg)
	wg.Wait()
	return c, err
}

// TestSenderFastPathKeepsOrder: a stream mixing short reads (written by the reader itself)
// and full reads (grouped by the group loop) decodes to exactly the source bytes, in
// order, in every mode; both paths were taken and every frame passed its checksum.
func TestSenderFastPathKeepsOrder(t *testing.T) {
	data := bytes.Join(binlogTraffic(rand.New(rand.NewPCG(1, 2)), newTable(rand.New(rand.NewPCG(3, 4)), 200), 3000), nil)
	for _, mode := range []Mode{Off, Zstd, Auto} {
		t.Run(string(mode), func(t *testing.T) {
			wan := &laggyWAN{}
			src := &scriptedSource{data: data, r: rand.New(rand.NewPCG(5, 6))}
			c, err := runSender(t, src, wan, mode)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			d := newFrameDecoder(&wan.buf, DefaultWindow)
			defer d.close()
			var got []byte
			for {
				typ, p, err := d.next()
				if err != nil {
					t.Fatalf("frame after %d bytes: %v", len(got), err)
				}
				if typ == frameEnd {
					break
				}
				got = append(got, p...)
			}
			if !bytes.Equal(got, data) {
				i := 0
				for i < min(len(got), len(data)) && got[i] == data[i] {
					i++
				}
				t.Fatalf("decoded %d bytes, want %d; first difference at %d", len(got), len(data), i)
			}
			s := c.snapshot(Entry)
			grouped := s.Flush.Size + s.Flush.Timeout + s.Flush.Idle - s.Flush.Inline
			if s.Flush.Inline == 0 || grouped == 0 {
				t.Errorf("flushes %+v: want both inline and grouped frames", s.Flush)
			}
			if s.Send.RawBytes != int64(len(data)) || s.Send.Groups() != s.Flush.Size+s.Flush.Timeout+s.Flush.Idle {
				t.Errorf("stats %+v / %+v do not add up to %d bytes", s.Send, s.Flush, len(data))
			}
		})
	}
}

// TestSenderFastPathWriteError: a WAN write failing on the fast path ends the sender with
// that error instead of hanging or reporting a clean end.
func TestSenderFastPathWriteError(t *testing.T) {
	src := &scriptedSource{data: bytes.Repeat([]byte("select 1;"), 10000), r: rand.New(rand.NewPCG(7, 8))}
	done := make(chan error, 1)
	go func() {
		_, err := runSender(t, src, &laggyWAN{failAt: 3}, Zstd)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "wan gone") {
			t.Fatalf("run = %v, want the WAN write error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("sender hung after a failed WAN write")
	}
}

// TestTunnelConcurrentMixedTraffic: many clients at once over mutual TLS, each sending
// request-sized messages and bulk bursts while reading the echo, get back exactly what
// they sent; the fast path carried most small messages and no frame was rejected.
func TestTunnelConcurrentMixedTraffic(t *testing.T) { bothMux(t, testTunnelConcurrentMixedTraffic) }

func testTunnelConcurrentMixedTraffic(t *testing.T, mux MuxMode) {
	entryTLS, exitTLS, _ := testCerts(t)
	for _, mode := range []Mode{Auto, Zstd} {
		t.Run(string(mode), func(t *testing.T) {
			entry, exit := pair(t, echoServer(t), mode, mux, entryTLS, exitTLS)
			var wg sync.WaitGroup
			errs := make(chan error, 12)
			for i := range 12 {
				wg.Go(func() { errs <- mixedClient(entry.Addr().String(), uint64(i)) })
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			waitIdle(t, entry.Tunnel, exit.Tunnel)
			for _, s := range []Stats{entry.Stats(), exit.Stats()} {
				if s.Corrupt != 0 || s.Failed != 0 {
					t.Errorf("%s: corrupt=%d failed=%d", s.Role, s.Corrupt, s.Failed)
				}
				if s.Flush.Inline == 0 {
					t.Errorf("%s: no inline frame in %+v", s.Role, s.Flush)
				}
			}
		})
	}
}

func mixedClient(addr string, seed uint64) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	r := rand.New(rand.NewPCG(seed, 99))
	for round := range 60 {
		size := 20 + r.IntN(300)
		if round%10 == 9 {
			size = 100<<10 + r.IntN(50<<10) // a burst: result set or binlog catch-up
		}
		msg := make([]byte, size)
		for i := range msg {
			msg[i] = byte('a' + (i*7+round+int(seed))%26)
		}
		werr := make(chan error, 1)
		go func() { _, err := c.Write(msg); werr <- err }()
		got := make([]byte, size)
		_, rerr := io.ReadFull(c, got)
		if err := <-werr; err != nil {
			return fmt.Errorf("client %d round %d: write: %w", seed, round, err)
		}
		if rerr != nil {
			return fmt.Errorf("client %d round %d: read: %w", seed, round, rerr)
		}
		if !bytes.Equal(got, msg) {
			return fmt.Errorf("client %d round %d: echo differs", seed, round)
		}
	}
	return nil
}
