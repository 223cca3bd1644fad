package tunnel

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

func TestTunnelRoundTrip(t *testing.T) { bothMux(t, testTunnelRoundTrip) }

func testTunnelRoundTrip(t *testing.T, mux MuxMode) {
	server := echoServer(t)
	for _, mode := range []Mode{Auto, Zstd, Off} {
		t.Run(string(mode), func(t *testing.T) {
			entry, exit := pair(t, server, mode, mux, nil, nil)
			var total int64
			for seed := range uint64(12) {
				r := rand.New(rand.NewPCG(seed, 99))
				kind := []string{"random", "readonly", "binlog"}[seed%3]
				data := concat(randomMsgs(r, kind))
				if got := exchange(t, entry.Addr().String(), data); !bytes.Equal(got, data) {
					t.Fatalf("seed %d %s: echoed %d bytes, sent %d, content differs", seed, kind, len(got), len(data))
				}
				total += int64(len(data))
			}
			// The client saw the echo end before the exit's last connection finished its
			// bookkeeping (end frame counted, conn untracked): wait for both ends to settle.
			waitIdle(t, entry.Tunnel, exit.Tunnel)
			waitWire(t, entry.Tunnel, exit.Tunnel)
			es, xs := entry.Stats(), exit.Stats()
			for name, got := range map[string]int64{
				"entry send raw": es.Send.RawBytes, "exit recv raw": xs.Recv.RawBytes,
				"exit send raw": xs.Send.RawBytes, "entry recv raw": es.Recv.RawBytes,
			} {
				if got != total {
					t.Errorf("%s = %d, want %d", name, got, total)
				}
			}
			if es.Send.WireBytes != xs.Recv.WireBytes || xs.Send.WireBytes != es.Recv.WireBytes {
				t.Errorf("wire bytes disagree: entry %+v exit %+v", es, xs)
			}
			switch mode {
			case Off:
				if es.Send.ZstdFrames+xs.Send.ZstdFrames != 0 {
					t.Errorf("off mode sent zstd frames: %v / %v", es, xs)
				}
			case Zstd:
				if es.Send.RawFrames+xs.Send.RawFrames != 0 || xs.Send.Ratio() < 1.2 {
					t.Errorf("zstd mode: raw frames or poor ratio: %v", xs)
				}
			}
			if es.Failed+xs.Failed != 0 {
				t.Errorf("failed connections: entry %d exit %d", es.Failed, xs.Failed)
			}
		})
	}
}

// TestTunnelLoneRequestNotDelayed: with a 2s group timeout, 20 request/response round trips
// must finish well under one timeout: a group is flushed as soon as the source is idle.
func TestTunnelLoneRequestNotDelayed(t *testing.T) { bothMux(t, testTunnelLoneRequestNotDelayed) }

func testTunnelLoneRequestNotDelayed(t *testing.T, mux MuxMode) {
	server := echoServer(t)
	exit := startTunnel(t, Config{Role: Exit, To: server, Compress: Zstd, GroupTimeout: 2 * time.Second})
	entry := startTunnel(t, Config{Role: Entry, To: exit.Addr().String(), Compress: Zstd, Mux: mux, GroupTimeout: 2 * time.Second})
	c, err := net.Dial("tcp", entry.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	req := query("SELECT c FROM sbtest1 WHERE id=42")
	buf := make([]byte, len(req))
	start := time.Now()
	for i := range 20 {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil || !bytes.Equal(buf, req) {
			t.Fatalf("round trip %d: %v", i, err)
		}
	}
	if el := time.Since(start); el > time.Second {
		t.Fatalf("20 round trips took %v: groups waited for the timeout", el)
	}
	t.Logf("mean round trip through entry+exit: %v", time.Since(start)/20)
	if f := entry.Stats().Flush; f.Idle < 20 || f.Timeout != 0 {
		t.Errorf("flush reasons = %+v, want 20 idle flushes", f)
	}
}

// TestTunnelExitDeathClosesClient kills the exit while the server streams: the client
// behind the entry must see its connection end, not hang.
func TestTunnelExitDeathClosesClient(t *testing.T) { bothMux(t, testTunnelExitDeathClosesClient) }

func testTunnelExitDeathClosesClient(t *testing.T, mux MuxMode) {
	server := serveTCP(t, func(c net.Conn) {
		chunk := bytes.Repeat([]byte("row-image-"), 100)
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := c.Write(chunk); err != nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
	entry, exit := pair(t, server, Auto, mux, nil, nil)
	c, err := net.Dial("tcp", entry.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(c, make([]byte, 10_000)); err != nil {
		t.Fatalf("no data through the tunnel before the kill: %v", err)
	}
	exit.stop()
	if err := readsUntilClosed(c, 3*time.Second); err != nil {
		t.Fatalf("client connection still open 3s after the exit died: %v", err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for entry.Stats().ActiveConns != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s := entry.Stats(); s.ActiveConns != 0 || s.Failed != 1 {
		t.Fatalf("entry after exit death: active=%d failed=%d, want 0 and 1", s.ActiveConns, s.Failed)
	}
	// A new client connection gets a new tunnel connection (refused now: exit is gone).
	c2, err := net.Dial("tcp", entry.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := readsUntilClosed(c2, 3*time.Second); err != nil {
		t.Fatalf("client of a dead exit not closed: %v", err)
	}
}

// TestTunnelNoGoroutineLeak runs 1000 connections through a tunnel pair and checks the
// goroutine count returns to where it was.
func TestTunnelNoGoroutineLeak(t *testing.T) { bothMux(t, testTunnelNoGoroutineLeak) }

func testTunnelNoGoroutineLeak(t *testing.T, mux MuxMode) {
	server := echoServer(t)
	entry, _ := pair(t, server, Auto, mux, nil, nil)
	// Warm up with as many clients at once as the entry may open mux links, so every link
	// (which stays open) exists before the count.
	var warm []net.Conn
	for range DefaultLinks() {
		c, err := net.Dial("tcp", entry.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		buf := []byte("warm up")
		if _, err := c.Write(buf); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
		warm = append(warm, c)
	}
	for _, c := range warm {
		c.Close()
	}
	before := settledGoroutines(0)
	const conns, workers = 1000, 8
	errc := make(chan error, workers)
	for w := range workers {
		go func() {
			for i := w; i < conns; i += workers {
				msg := []byte(fmt.Sprintf("connection %d says hello", i))
				if got := exchange(t, entry.Addr().String(), msg); !bytes.Equal(got, msg) {
					errc <- fmt.Errorf("connection %d: got %q", i, got)
					return
				}
			}
			errc <- nil
		}()
	}
	for range workers {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	if after := settledGoroutines(before); after > before {
		t.Fatalf("goroutines: %d before 1000 connections, %d after", before, after)
	}
	if s := entry.Stats(); s.Conns != conns+int64(DefaultLinks()) || s.Failed != 0 {
		t.Fatalf("entry stats: %v", s)
	}
}
