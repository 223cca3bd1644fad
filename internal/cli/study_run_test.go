package cli

import (
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/livemetrics"
)

// --metrics-listen serves what the session publishes, at the address it prints, until the
// command stops it; without the flag nothing listens and nothing is published.
func TestServeMetrics(t *testing.T) {
	p, _, errb, _ := testProcess(t, true)
	if pub, stop, err := serveMetrics(p, ""); pub != nil || err != nil {
		t.Fatalf("no address: publisher %v, error %v", pub, err)
	} else {
		stop()
	}
	pub, stop, err := serveMetrics(p, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`http://(\S+)/metrics`).FindStringSubmatch(errb.String())
	if m == nil {
		stop()
		t.Fatalf("no address printed: %q", errb.String())
	}
	pub.Second(livemetrics.Labels{Study: "run", Series: "20mbit", Threads: 8, Link: "rate 20mbit"}, livemetrics.Second{Transactions: 42})
	resp, err := http.Get("http://" + m[1] + "/metrics")
	if err != nil {
		stop()
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `threads="8"} 42`) {
		t.Errorf("served:\n%s", body)
	}
	stop()
	if c, err := net.DialTimeout("tcp", m[1], time.Second); err == nil {
		c.Close()
		t.Error("still listening after stop")
	}
}
