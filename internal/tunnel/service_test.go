package tunnel

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// echoOnce sends msg on c and reads it back.
func echoOnce(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, msg); err != nil {
		t.Fatalf("write %q: %v", msg, err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != msg {
		t.Fatalf("echo of %q: %q, %v", msg, got, err)
	}
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestDrain: a draining entry accepts nothing new while its open connection goes on, and
// Drain returns when that connection ends, or when its context does.
func TestDrain(t *testing.T) { bothMux(t, testDrain) }

func testDrain(t *testing.T, mux MuxMode) {
	entry, exit := pair(t, echoServer(t), Off, mux, nil, nil)
	c := dial(t, entry.Addr().String())
	echoOnce(t, c, "before")
	drained := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		drained <- entry.Drain(ctx)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		nc, err := net.DialTimeout("tcp", entry.Addr().String(), time.Second)
		if err != nil {
			break // the listener is closed
		}
		nc.Close()
		if time.Now().After(deadline) {
			t.Fatal("a draining entry still accepts connections after 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	echoOnce(t, c, "during the drain")
	select {
	case err := <-drained:
		t.Fatalf("Drain returned (%v) while a connection was open", err)
	case <-time.After(100 * time.Millisecond):
	}
	c.(*net.TCPConn).CloseWrite()
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("the drained connection did not end cleanly: %v", err)
	}
	select {
	case err := <-drained:
		if err != nil {
			t.Fatalf("Drain: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Drain did not return within 5s of the last connection's end")
	}
	if s := entry.Stats(); s.StreamResets != 0 {
		t.Errorf("a drain reset %d connection(s)", s.StreamResets)
	}
	waitIdle(t, exit.Tunnel)
}

// A drain that outlasts its context returns the context's error, the connection still open.
func TestDrainTimeout(t *testing.T) {
	entry, _ := pair(t, echoServer(t), Off, MuxOn, nil, nil)
	c := dial(t, entry.Addr().String())
	echoOnce(t, c, "open")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := entry.Drain(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Drain with a connection open past its deadline: %v", err)
	}
	echoOnce(t, c, "still open")
}

// A draining exit refuses new streams on a mux link it already has, and serves the open one.
func TestDrainExitRefusesNewStreams(t *testing.T) {
	entry, exit := pair(t, greeter(t), Off, MuxOn, nil, nil)
	c := dial(t, entry.Addr().String())
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(c, make([]byte, len("greeting"))); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go exit.Drain(ctx)
	for deadline := time.Now().Add(5 * time.Second); !exit.draining.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the exit never started draining")
		}
	}
	if !refused(t, entry.Addr().String()) {
		t.Error("a draining exit served a new stream")
	}
}

// TestReloadTLS: after new certificates and a reload, open connections go on and new ones
// use the new certificate (an end still on the old CA is refused); a reload that fails
// keeps the certificate in use.
func TestReloadTLS(t *testing.T) { bothMux(t, testReloadTLS) }

func testReloadTLS(t *testing.T, mux MuxMode) {
	dir := t.TempDir()
	if err := GenerateCerts(dir, nil); err != nil {
		t.Fatal(err)
	}
	files := func(c *Config, cert, key string) {
		c.TLSCert, c.TLSKey, c.TLSCA = filepath.Join(dir, cert), filepath.Join(dir, key), filepath.Join(dir, CAFile)
	}
	xc := Config{Role: Exit, To: echoServer(t)}
	files(&xc, ExitCertFile, ExitKeyFile)
	exit := startTunnel(t, xc)
	ec := Config{Role: Entry, To: exit.Addr().String(), Mux: mux}
	files(&ec, EntryCertFile, EntryKeyFile)
	entry := startTunnel(t, ec)
	c := dial(t, entry.Addr().String())
	echoOnce(t, c, "first certificate")
	before := exit.tls.Load().Certificates[0].Certificate[0]
	if err := GenerateCerts(dir, nil); err != nil { // a new CA: the old certificates do not check
		t.Fatal(err)
	}
	if err := exit.ReloadTLS(); err != nil {
		t.Fatal(err)
	}
	if after := exit.tls.Load().Certificates[0].Certificate[0]; bytes.Equal(before, after) {
		t.Fatal("the exit's certificate did not change")
	}
	echoOnce(t, c, "open across the reload")
	if mux == MuxOff { // a mux link carries new clients on its open, already verified, connection
		if !refused(t, entry.Addr().String()) {
			t.Error("an entry on the old CA reached an exit on the new one")
		}
		if exit.Stats().TLSRefused == 0 && entry.Stats().TLSRefused == 0 {
			t.Error("the refused handshake is not counted")
		}
	}
	if err := entry.ReloadTLS(); err != nil {
		t.Fatal(err)
	}
	echoOnce(t, dial(t, entry.Addr().String()), "new certificate")
	echoOnce(t, c, "still open")

	if err := os.WriteFile(filepath.Join(dir, ExitCertFile), []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kept := exit.tls.Load()
	if err := exit.ReloadTLS(); err == nil {
		t.Fatal("a reload of a broken certificate succeeded")
	}
	if exit.tls.Load() != kept {
		t.Fatal("a failed reload replaced the certificate")
	}
	echoOnce(t, dial(t, entry.Addr().String()), "after a failed reload")
}
