package promserve

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The handler is served at /metrics until the context ends; then the port is closed.
func TestServe(t *testing.T) {
	s, err := Listen("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "up 1\n")
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Serve(ctx, slog.New(slog.DiscardHandler), "test metrics"); close(done) }()
	base := "http://" + s.Addr().String()
	for path, want := range map[string]int{"/metrics": http.StatusOK, "/other": http.StatusNotFound} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || (want == http.StatusOK && !strings.Contains(string(body), "up 1")) {
			t.Errorf("GET %s: HTTP %d %q, want %d", path, resp.StatusCode, body, want)
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if c, err := net.DialTimeout("tcp", s.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Error("the port still accepts after Serve returned")
	}
}

// A port in use fails at Listen, naming the address.
func TestListenInUse(t *testing.T) {
	s, err := Listen("127.0.0.1:0", http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := Listen(s.Addr().String(), http.NotFoundHandler()); err == nil || !strings.Contains(err.Error(), s.Addr().String()) {
		t.Errorf("second Listen on %s: %v, want an error naming it", s.Addr(), err)
	}
}
