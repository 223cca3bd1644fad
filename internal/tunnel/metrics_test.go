package tunnel

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/nstest"
)

// scrape reads h's exposition and returns it with each sample's value by its name and
// labels as the text spells them (`wirelab_tunnel_raw_bytes_total{direction="send",role="exit"}`).
func scrape(t testing.TB, h http.Handler) (string, map[string]float64) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: HTTP %d: %s", rec.Code, rec.Body)
	}
	text := rec.Body.String()
	samples := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("sample %q: %v", line, err)
		}
		samples[line[:i]] = v
	}
	return text, samples
}

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
		text, samples := scrape(t, end.MetricsHandler())
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
		promtool(t, role, text)
	}
}

// promtool runs `promtool check metrics` on text: Prometheus's own linter.
func promtool(t *testing.T, role, text string) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		nstest.Unavailable(t, "promtool not installed (Debian package prometheus)")
		return
	}
	cmd := exec.Command(bin, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("%s: promtool check metrics: %v\n%s", role, err, out)
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
