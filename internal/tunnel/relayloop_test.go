//go:build linux

package tunnel

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"

	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"
)

// TestRelayLoop: on Linux a mux link over TCP moves its bytes on the relay loop, with and
// without TLS, and carries concurrent bulk echoes (both directions at once, so the WAN
// socket fills and frames wait for room) intact and in order; WIRELAB_TUNNEL_LOOP=off
// runs the same link on goroutines.
func TestRelayLoop(t *testing.T) {
	entryTLS, exitTLS, _ := testCerts(t)
	for _, tc := range []struct {
		name     string
		tls      bool
		loopOff  bool
		wantLoop bool
	}{
		{"plain", false, false, true},
		{"tls", true, false, true},
		{"loop off", true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.loopOff {
				t.Setenv("WIRELAB_TUNNEL_LOOP", "off")
			}
			var etls, xtls = entryTLS, exitTLS
			if !tc.tls {
				etls, xtls = nil, nil
			}
			entry, exit := pair(t, echoServer(t), Off, MuxOn, etls, xtls)
			r := rand.New(rand.NewPCG(7, 7))
			const clients = 8
			data := make([][]byte, clients)
			for i := range data {
				data[i] = make([]byte, 4<<20+r.IntN(1<<20))
				for j := range data[i] {
					data[i][j] = byte(r.Uint32())
				}
			}
			var wg sync.WaitGroup
			for i := range clients {
				wg.Go(func() {
					got, err := echoAll(entry.Addr().String(), data[i])
					if err != nil {
						t.Errorf("client %d: %v", i, err)
					} else if !bytes.Equal(got, data[i]) {
						t.Errorf("client %d: echo of %d bytes came back as %d bytes, not equal", i, len(data[i]), len(got))
					}
				})
			}
			wg.Wait()
			entry.links.mu.Lock()
			links := append([]*muxLink(nil), entry.links.links...)
			entry.links.mu.Unlock()
			if len(links) == 0 {
				t.Fatal("entry has no mux link")
			}
			for _, l := range links {
				if got := l.loop != nil; got != tc.wantLoop {
					t.Errorf("relay loop running: %v, want %v", got, tc.wantLoop)
				}
			}
			waitIdle(t, entry.Tunnel, exit.Tunnel)
		})
	}
}

// TestRelayLoopRequestReply: many small round trips on several streams at once, the
// loop's fast path, each reply whole and in order.
func TestRelayLoopRequestReply(t *testing.T) {
	entry, _ := pair(t, echoServer(t), Auto, MuxOn, nil, nil)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			c, err := net.Dial("tcp", entry.Addr().String())
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * time.Second))
			if err := pingPong(c, 500); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// echoAll writes data to addr while reading the echo, and returns what came back.
func echoAll(addr string, data []byte) ([]byte, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	errc := make(chan error, 1)
	go func() {
		_, err := c.Write(data)
		if err == nil {
			err = c.(*net.TCPConn).CloseWrite()
		}
		errc <- err
	}()
	got, rerr := io.ReadAll(c)
	if err := <-errc; err != nil {
		return got, fmt.Errorf("write: %w", err)
	}
	if rerr != nil {
		return got, fmt.Errorf("read: %w", rerr)
	}
	return got, nil
}

// TestRelayLoopTLSBufferedFrame: the entry's first frame arrives in the same TLS record
// as the mux preface, so the exit's TLS connection has it decrypted and buffered when the
// relay loop takes the link over, and the WAN socket is never readable for it again. The
// loop must hand it to the stream all the same (not wait in epoll for an arrival that
// already happened).
func TestRelayLoopTLSBufferedFrame(t *testing.T) {
	entryTLS, exitTLS, _ := testCerts(t)
	exit := startTunnel(t, Config{Role: Exit, To: echoServer(t), Mux: MuxOn, TLS: exitTLS})
	raw, err := net.Dial("tcp", exit.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(5 * time.Second))
	cfg := entryTLS.Clone()
	cfg.ServerName = "127.0.0.1" // as an entry sets it from --to
	c := tls.Client(raw, cfg)
	if err := c.Handshake(); err != nil {
		t.Fatal(err)
	}
	var rec []byte
	rec = appendRecord(rec, recOpen, 1, 0)
	rec = appendRecord(rec, recData, 1, 4)
	rec = append(rec, "ping"...)
	e := newFrameEncoder(0, 0)
	defer e.close()
	if err := e.begin(frameRaw); err != nil {
		t.Fatal(err)
	}
	e.add(rec)
	frame, err := e.finish()
	if err != nil {
		t.Fatal(err)
	}
	// One Write: one TLS record with the preface and the frame.
	if _, err := c.Write(append([]byte(muxPreface), frame...)); err != nil {
		t.Fatal(err)
	}
	dec := newFrameDecoder(c)
	defer dec.close()
	var got []byte
	for string(got) != "ping" {
		_, p, err := dec.next()
		if err != nil {
			t.Fatalf("read the echo of a frame sent with the preface: got %q: %v", got, err)
		}
		for len(p) > 0 {
			r, rest, err := nextRecord(p)
			if err != nil {
				t.Fatal(err)
			}
			p = rest
			if r.kind == recData && r.id == 1 {
				got = append(got, r.payload...)
			}
		}
	}
}
