package tunnel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"
)

// frameTap stands between entry and exit as the WAN and forwards exit → entry frame by
// frame, doing fault to the frame numbered at (1-based, counting every frame on every
// WAN connection it carries).
type frameTap struct {
	at    int
	fault string // "corrupt": flip a payload byte; "truncate": cut the frame; "drop": cut before it
	mu    sync.Mutex
	n     int
	fired bool
}

// tap listens in front of to and returns its address.
func (f *frameTap) tap(t *testing.T, to string) string {
	t.Helper()
	return serveTCP(t, func(c net.Conn) {
		up, err := net.Dial("tcp", to)
		if err != nil {
			return
		}
		defer up.Close()
		go func() { io.Copy(up, c); up.(*net.TCPConn).CloseWrite() }()
		f.forward(c, up)
	})
}

// forward copies frames from exit to entry until either side ends or the fault fires.
func (f *frameTap) forward(entry, exit net.Conn) {
	var h [headerLen]byte
	for {
		if _, err := io.ReadFull(exit, h[:]); err != nil {
			return
		}
		p := make([]byte, binary.BigEndian.Uint32(h[1:5]))
		if _, err := io.ReadFull(exit, p); err != nil {
			return
		}
		f.mu.Lock()
		f.n++
		fire := f.n == f.at
		f.fired = f.fired || fire
		f.mu.Unlock()
		switch {
		case fire && f.fault == "drop":
			return
		case fire && f.fault == "truncate":
			entry.Write(h[:])
			entry.Write(p[:len(p)/2])
			return
		case fire && f.fault == "corrupt":
			p[len(p)/2] ^= 0x20
		}
		if _, err := entry.Write(append(h[:], p...)); err != nil {
			return
		}
	}
}

func (f *frameTap) didFire() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fired
}

// streamer sends every connection the same bytes, in small writes, then waits for EOF.
func streamer(t *testing.T, data []byte) string {
	return serveTCP(t, func(c net.Conn) {
		for p := data; len(p) > 0; {
			k := min(len(p), 1500)
			if _, err := c.Write(p[:k]); err != nil {
				return
			}
			p = p[k:]
		}
		io.Copy(io.Discard, c)
	})
}

// readData reads what the server streams, until all n bytes came or the connection ends.
func readData(c net.Conn, n int) ([]byte, error) {
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	got := make([]byte, n)
	k, err := io.ReadFull(c, got)
	return got[:k], err
}

// TestTunnelWANFaults: a frame corrupted or cut on the WAN, or the WAN dropped between
// frames, ends every client connection it carried with a reset (not a clean end, not a
// hang), what they received before is an exact prefix of what the server sent, and a new
// client afterwards gets a working connection.
func TestTunnelWANFaults(t *testing.T) { bothMux(t, testTunnelWANFaults) }

func testTunnelWANFaults(t *testing.T, mux MuxMode) {
	r := rand.New(rand.NewPCG(5, 6))
	data := concat(binlogTraffic(r, newTable(r, 500), 1500))
	for _, fault := range []string{"corrupt", "truncate", "drop"} {
		t.Run(fault, func(t *testing.T) {
			tap := &frameTap{at: 6, fault: fault}
			exit := startTunnel(t, Config{Role: Exit, To: streamer(t, data), Compress: Zstd, Mux: mux})
			entry := startTunnel(t, Config{Role: Entry, To: tap.tap(t, exit.Addr().String()), Compress: Zstd, Mux: mux})
			const clients = 3
			type result struct {
				got []byte
				err error
			}
			results := make(chan result, clients)
			for range clients {
				go func() {
					c, err := net.Dial("tcp", entry.Addr().String())
					if err != nil {
						results <- result{err: err}
						return
					}
					defer c.Close()
					got, err := readData(c, len(data))
					results <- result{got, err}
				}()
			}
			cut := 0
			for range clients {
				r := <-results
				if !bytes.HasPrefix(data, r.got) {
					t.Fatalf("a client received %d bytes that are not a prefix of the server's", len(r.got))
				}
				var ne net.Error
				switch {
				case errors.As(r.err, &ne) && ne.Timeout():
					t.Fatalf("a client hung after the fault (%d bytes received)", len(r.got))
				case len(r.got) < len(data):
					cut++
					if !errors.Is(r.err, syscall.ECONNRESET) {
						t.Errorf("a cut client got %d of %d bytes and err=%v, want a reset", len(r.got), len(data), r.err)
					}
				}
			}
			if !tap.didFire() || cut == 0 {
				t.Fatalf("fault fired=%v, %d clients cut: the test did not exercise the fault", tap.didFire(), cut)
			}
			if fault == "corrupt" {
				deadline := time.Now().Add(3 * time.Second)
				for entry.Stats().Corrupt == 0 && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				if entry.Stats().Corrupt == 0 {
					t.Errorf("corrupt frame not counted: %v", entry.Stats())
				}
			}
			// The client reconnects: the entry dials a new WAN connection (the tap fired once).
			c, err := net.Dial("tcp", entry.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if got, err := readData(c, len(data)); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("after the fault a new client got %d of %d bytes, err %v", len(got), len(data), err)
			}
		})
	}
}
