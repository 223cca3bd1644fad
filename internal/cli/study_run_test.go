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

// calibrate measures like run and the studies, so it takes the same measuring flags (its
// bench flags register them): a bad --metrics-listen is a usage error before anything runs.
func TestCalibrateTakesTheMeasureFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"calibrate", "--metrics-listen", "0.0.0.0:9470"}, `--metrics-listen "0.0.0.0:9470": refusing a wildcard address`},
		{[]string{"calibrate", "--allow-wildcard"}, "--allow-wildcard applies only with --metrics-listen"},
	} {
		p, _, errb, f := testProcess(t, true)
		p.DataDir = t.TempDir()
		if code := Main(c.args, p); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %q", c.args, code, errb, c.want)
		}
		if len(f.Calls) > 0 {
			t.Errorf("%v: bad input ran commands: %v", c.args, f.Lines())
		}
	}
}
