package tunnel

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"
)

// echoServer echoes every connection until the peer half-closes, then half-closes back.
func echoServer(t testing.TB) string {
	t.Helper()
	return serveTCP(t, func(c net.Conn) {
		io.Copy(c, c)
		c.(*net.TCPConn).CloseWrite()
	})
}

// serveTCP runs fn for every connection on a 127.0.0.1 listener until the test ends.
func serveTCP(t testing.TB, fn func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Go(func() {
				defer func() { mu.Lock(); delete(conns, c); mu.Unlock(); c.Close() }()
				fn(c)
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// running is a tunnel end served in the background; stop ends it and waits for Serve.
type running struct {
	*Tunnel
	stop func()
}

func startTunnel(t testing.TB, cfg Config) *running {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	tun, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%s): %v", cfg.Role, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tun.Serve(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Serve(%s): %v", cfg.Role, err)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("Serve(%s) did not return within 10s of cancel", cfg.Role)
			}
		})
	}
	t.Cleanup(stop)
	return &running{Tunnel: tun, stop: stop}
}

// pair starts exit (to server) and entry (to exit) with the same compression settings.
func pair(t testing.TB, server string, mode Mode, mux MuxMode, entryTLS, exitTLS *tls.Config) (entry, exit *running) {
	t.Helper()
	exit = startTunnel(t, Config{Role: Exit, To: server, Compress: mode, Mux: mux, TLS: exitTLS})
	entry = startTunnel(t, Config{Role: Entry, To: exit.Addr().String(), Compress: mode, Mux: mux, TLS: entryTLS})
	return entry, exit
}

// bothMux runs fn as a subtest with the mux off and on: every end-to-end behaviour must
// hold in both layouts.
func bothMux(t *testing.T, fn func(t *testing.T, mux MuxMode)) {
	t.Helper()
	for _, m := range []MuxMode{MuxOff, MuxOn} {
		t.Run("mux="+string(m), func(t *testing.T) { fn(t, m) })
	}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// exchange writes data to addr while reading the echo, and returns what came back.
func exchange(t testing.TB, addr string, data []byte) []byte {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
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
		t.Fatalf("write: %v", err)
	}
	if rerr != nil {
		t.Fatalf("read: %v", rerr)
	}
	return got
}

// slowConn is a WAN connection whose writes take as long as a link of rate bytes/s needs.
type slowConn struct {
	net.Conn
	rate float64
}

func (c *slowConn) Write(p []byte) (int, error) {
	time.Sleep(time.Duration(float64(len(p)) / c.rate * float64(time.Second)))
	return c.Conn.Write(p)
}

func slowDial(rate float64) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &slowConn{Conn: c, rate: rate}, nil
	}
}

// readsUntilClosed reports whether c reaches EOF or an error within d.
func readsUntilClosed(c net.Conn, d time.Duration) error {
	c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 64<<10)
	for {
		if _, err := c.Read(buf); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return err
			}
			return nil
		}
	}
}

// waitIdle waits (up to 5s) until no tunnel end has an active connection.
func waitIdle(t testing.TB, ends ...*Tunnel) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, e := range ends {
		for e.Stats().ActiveConns != 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
}

// waitWire waits (up to 5s) until each end has received every frame byte the other sent:
// on a mux link the last frame (a fin or a credit) can follow the last stream's end.
func waitWire(t testing.TB, entry, exit *Tunnel) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		es, xs := entry.Stats(), exit.Stats()
		if es.Send.WireBytes == xs.Recv.WireBytes && xs.Send.WireBytes == es.Recv.WireBytes {
			return
		}
	}
}
