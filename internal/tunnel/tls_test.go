package tunnel

import (
	"bytes"
	"crypto/tls"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func testCerts(t testing.TB) (entryTLS, exitTLS *tls.Config, dir string) {
	t.Helper()
	dir = t.TempDir()
	if err := GenerateCerts(dir, nil); err != nil {
		t.Fatal(err)
	}
	f := func(n string) string { return filepath.Join(dir, n) }
	exitTLS, err := LoadTLS(f(ExitCertFile), f(ExitKeyFile), f(CAFile), true)
	if err != nil {
		t.Fatal(err)
	}
	entryTLS, err = LoadTLS(f(EntryCertFile), f(EntryKeyFile), f(CAFile), false)
	if err != nil {
		t.Fatal(err)
	}
	return entryTLS, exitTLS, dir
}

// refused dials the entry and reports whether the client's connection is closed without
// any byte from the server (which greets first, like MySQL).
func refused(t *testing.T, entryAddr string) bool {
	t.Helper()
	c, err := net.Dial("tcp", entryAddr)
	if errors.Is(err, syscall.ECONNRESET) {
		return true // reset so fast (a mux link failing at once) that connect saw it
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.Read(make([]byte, 16))
	return n == 0 && err != nil && !strings.Contains(err.Error(), "timeout")
}

func greeter(t *testing.T) string {
	return serveTCP(t, func(c net.Conn) { c.Write([]byte("greeting")); c.Read(make([]byte, 1)) })
}

func TestTunnelTLS(t *testing.T) { bothMux(t, testTunnelTLS) }

func testTunnelTLS(t *testing.T, mux MuxMode) {
	entryTLS, exitTLS, _ := testCerts(t)
	noClientCert := entryTLS.Clone()
	noClientCert.Certificates = nil
	tests := []struct {
		name            string
		entryTLS        *tls.Config
		exitTLS         *tls.Config
		wantRefused     bool
		wantExitFailure bool
	}{
		{"mutual TLS works", entryTLS, exitTLS, false, false},
		{"entry without client certificate", noClientCert, exitTLS, true, true},
		{"plaintext entry to TLS exit", nil, exitTLS, true, true},
		{"TLS entry to plaintext exit", entryTLS, nil, true, true},
		{"plaintext both", nil, nil, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entry, exit := pair(t, greeter(t), Auto, mux, tt.entryTLS, tt.exitTLS)
			if got := refused(t, entry.Addr().String()); got != tt.wantRefused {
				t.Fatalf("refused = %v, want %v", got, tt.wantRefused)
			}
			deadline := time.Now().Add(3 * time.Second)
			for tt.wantExitFailure && exit.Stats().Failed == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if got := exit.Stats().Failed > 0; got != tt.wantExitFailure {
				t.Fatalf("exit failed connections > 0 = %v, want %v", got, tt.wantExitFailure)
			}
		})
	}
}

func TestTunnelTLSRoundTrip(t *testing.T) { bothMux(t, testTunnelTLSRoundTrip) }

func testTunnelTLSRoundTrip(t *testing.T, mux MuxMode) {
	entryTLS, exitTLS, _ := testCerts(t)
	entry, _ := pair(t, echoServer(t), Zstd, mux, entryTLS, exitTLS)
	data := bytes.Repeat([]byte("83868641912-28773972837-"), 20000)
	if got := exchange(t, entry.Addr().String(), data); !bytes.Equal(got, data) {
		t.Fatalf("echo over TLS differs: %d bytes, want %d", len(got), len(data))
	}
}

func TestLoadTLSErrors(t *testing.T) {
	_, _, dir := testCerts(t)
	f := func(n string) string { return filepath.Join(dir, n) }
	tests := []struct {
		name, cert, key, ca, want string
	}{
		{"missing cert", f("nope.pem"), f(ExitKeyFile), f(CAFile), "--tls-cert"},
		{"key of another cert", f(ExitCertFile), f(EntryKeyFile), f(CAFile), "--tls-key"},
		{"missing ca", f(ExitCertFile), f(ExitKeyFile), f("nope.pem"), "--tls-ca"},
		{"ca is a key", f(ExitCertFile), f(ExitKeyFile), f(ExitKeyFile), "no PEM certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadTLS(tt.cert, tt.key, tt.ca, true)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}
