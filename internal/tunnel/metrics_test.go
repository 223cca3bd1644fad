package tunnel

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/promtest"
)

// TestMetrics: after traffic through a TLS mux link both ends serve every metric with a
// HELP line, the byte counters are the --stats line's, and promtool accepts the text.
func TestMetrics(t *testing.T) {
	entryTLS, exitTLS, _ := testCerts(t)
	entry, exit := pair(t, echoServer(t), Zstd, MuxOn, entryTLS, exitTLS)
	data := bytes.Repeat([]byte("INSERT INTO sbtest1 VALUES (4242, 'x-y-z'); "), 4000)
	if got := exchange(t, entry.Addr().String(), data); !bytes.Equal(got, data) {
		t.Fatalf("echo: %d bytes back, want %d", len(got), len(data))
	}
	waitIdle(t, entry.Tunnel, exit.Tunnel)
	waitWire(t, entry.Tunnel, exit.Tunnel)
	for _, end := range []*running{entry, exit} {
		role := string(end.cfg.Role)
		text, samples := promtest.Scrape(t, end.MetricsHandler())
		for _, name := range MetricNames() {
			if !strings.Contains(text, "# HELP "+name+" ") || !strings.Contains(text, "\n"+name) {
				t.Errorf("%s: metric %s missing, or without HELP", role, name)
			}
		}
		s := end.Stats()
		for dir, d := range map[string]DirStats{"send": s.Send, "recv": s.Recv} {
			for kind, want := range map[string]int64{"raw": d.RawBytes, "wire": d.WireBytes} {
				key := fmt.Sprintf(`wirelab_tunnel_%s_bytes_total{direction=%q,role=%q}`, kind, dir, role)
				if got := samples[key]; got != float64(want) || want == 0 {
					t.Errorf("%s = %v, stats %d (want equal, and traffic)", key, got, want)
				}
			}
		}
		if got := samples[fmt.Sprintf(`wirelab_tunnel_links_open{role=%q}`, role)]; got != 1 {
			t.Errorf("%s: links open %v, want 1", role, got)
		}
		if got := samples[fmt.Sprintf(`wirelab_tunnel_tls_cert_expiry_seconds{role=%q}`, role)]; got < 3600 {
			t.Errorf("%s: certificate expires in %vs, want a fresh one's", role, got)
		}
		promtest.Lint(t, role, text)
	}
}

// A tunnel end with MetricsListen serves the metrics over HTTP at /metrics.
func TestMetricsListen(t *testing.T) {
	exit := startTunnel(t, Config{Role: Exit, To: echoServer(t), MetricsListen: "127.0.0.1:0"})
	resp, err := http.Get("http://" + exit.MetricsAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `wirelab_tunnel_streams_open{role="exit"} 0`) {
		t.Fatalf("HTTP %d:\n%s", resp.StatusCode, body)
	}
	if strings.Contains(string(body), certExpiryMetric) {
		t.Error("an end without TLS reports a certificate expiry")
	}
}
