package promtest

import (
	"bufio"
	"bytes"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/nstest"
)

// Scrape reads h's exposition and returns it with each sample's value by its name and
// labels as the text spells them (`wirelab_tunnel_raw_bytes_total{direction="send",role="exit"}`).
func Scrape(t testing.TB, h http.Handler) (string, map[string]float64) {
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

// Lint runs `promtool check metrics` on text, Prometheus's own linter, and fails the test
// on any complaint; what names the endpoint in the message.
func Lint(t testing.TB, what, text string) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		nstest.Unavailable(t, "promtool not installed (Debian package prometheus)")
		return
	}
	cmd := exec.Command(bin, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("%s: promtool check metrics: %v\n%s", what, err, out)
	}
}
