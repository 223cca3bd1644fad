package livemetrics

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/promtest"
	"github.com/wirelab/wirelab/internal/stats"
)

// key is a sample's name and labels as the text spells them: labels sorted by name, a
// histogram bucket's le last.
func key(name string, l Labels, extra ...string) string {
	pairs, le := []string{}, ""
	for i, n := range labelNames {
		pairs = append(pairs, fmt.Sprintf("%s=%q", n, l.values()[i]))
	}
	for i := 0; i+1 < len(extra); i += 2 {
		p := fmt.Sprintf("%s=%q", extra[i], extra[i+1])
		if extra[i] == "le" {
			le = "," + p
			continue
		}
		pairs = append(pairs, p)
	}
	sort.Strings(pairs)
	return name + "{" + strings.Join(pairs, ",") + le + "}"
}

var (
	done    = Labels{Study: "run", Series: "20mbit", Channel: "direct", Threads: 8, Link: "rate 20mbit, delay 5ms"}
	running = Labels{Study: "run", Series: "20mbit", Channel: "direct", Threads: 32, Link: "rate 20mbit, delay 5ms"}
)

// A finished point keeps its counters and histogram and loses its gauges; a running one
// has both; every metric has its HELP line and promtool accepts the text.
func TestRegistryScrape(t *testing.T) {
	r := New(2)
	r.Second(done, Second{Transactions: 100, Queries: 1600, Errors: 1, Driver: &DriverSecond{TPS: 100, LatP95Ms: 12.5},
		WireUpBytes: 1000, WireDownBytes: 5000, CPUServerS: 0.5, CPUClientS: 0.25, CPUMachineS: 1.5, DelayLineCPUS: 0.02})
	r.Second(done, Second{Transactions: 90, Queries: 1440, WireUpBytes: 900, WireDownBytes: 4000, DelayLineCPUS: 0.03})
	r.Latency(done, stats.NewHistogram([]stats.Bucket{{Ms: 0.7, Count: 10}, {Ms: 3, Count: 5}, {Ms: 20000, Count: 1}}))
	r.Latency(done, stats.NewHistogram([]stats.Bucket{{Ms: 0.7, Count: 2}})) // a second client host's
	r.End(done)
	r.Second(running, Second{Transactions: 300, Driver: &DriverSecond{TPS: 300, LatP95Ms: 40}})
	r.Second(running, Second{Transactions: 310}) // no new line: the gauge keeps 300

	text, s := promtest.Scrape(t, r.Handler())
	want := map[string]float64{
		key("wirelab_run_transactions_total", done):                    190,
		key("wirelab_run_queries_total", done):                         3040,
		key("wirelab_run_errors_total", done):                          1,
		key("wirelab_run_wire_bytes_total", done, "direction", "up"):   1900,
		key("wirelab_run_wire_bytes_total", done, "direction", "down"): 9000,
		key("wirelab_run_cpu_seconds_total", done, "side", "server"):   0.5,
		key("wirelab_run_cpu_seconds_total", done, "side", "machine"):  1.5,
		key("wirelab_run_delay_line_cpu_seconds_total", done):          0.05,
		key("wirelab_run_point_running", done):                         0,
		key("wirelab_run_latency_seconds_bucket", done, "le", "0.001"): 12,
		key("wirelab_run_latency_seconds_bucket", done, "le", "0.005"): 17,
		key("wirelab_run_latency_seconds_bucket", done, "le", "10"):    17,
		key("wirelab_run_latency_seconds_bucket", done, "le", "+Inf"):  18,
		key("wirelab_run_latency_seconds_count", done):                 18,
		key("wirelab_run_latency_seconds_sum", done):                   0.0084 + 0.015 + 20,
		key("wirelab_run_transactions_total", running):                 610,
		key("wirelab_run_tps", running):                                300,
		key("wirelab_run_latency_p95_seconds", running):                0.04,
		key("wirelab_run_point_running", running):                      1,
		"wirelab_run_machine_cpus":                                     2,
	}
	for k, v := range want {
		got, ok := s[k]
		if !ok || math.Abs(got-v) > 1e-9 {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	for _, k := range []string{key("wirelab_run_tps", done), key("wirelab_run_latency_p95_seconds", done),
		key("wirelab_run_latency_mean_seconds", running), key("wirelab_run_latency_seconds_count", running)} {
		if _, ok := s[k]; ok {
			t.Errorf("%s is served: a finished point's gauge, a latency the driver does not report, or a histogram before any", k)
		}
	}
	for _, m := range metrics {
		if m.name == "latency_mean_seconds" {
			continue // no pgbench point here
		}
		if !strings.Contains(text, "# HELP "+prefix+m.name+" ") {
			t.Errorf("%s has no HELP line", prefix+m.name)
		}
	}
	for _, name := range []string{histogramName, cpusName, "process_cpu_seconds_total"} {
		if !strings.Contains(text, "# HELP "+name+" ") {
			t.Errorf("%s has no HELP line", name)
		}
	}
	promtest.Lint(t, "live metrics", text)
}

// pgbench's per-second line gives the mean latency, served as its own gauge.
func TestRegistryMeanLatency(t *testing.T) {
	r := New(1)
	l := Labels{Study: "run", Series: "unlimited", Threads: 10, Link: "rate unlimited"}
	r.Second(l, Second{Transactions: 500, Driver: &DriverSecond{TPS: 500, LatAvgMs: 20}})
	text, s := promtest.Scrape(t, r.Handler())
	if got := s[key("wirelab_run_latency_mean_seconds", l)]; got != 0.02 {
		t.Errorf("mean latency %v, want 0.02", got)
	}
	promtest.Lint(t, "live metrics (pgbench)", text)
}

func TestFlags(t *testing.T) {
	for _, c := range []struct {
		args    []string
		addr    string
		wantErr string
	}{
		{nil, "", ""},
		{[]string{"--metrics-listen", "127.0.0.1:9470"}, "127.0.0.1:9470", ""},
		{[]string{"--metrics-listen", "0.0.0.0:9470"}, "", "--allow-wildcard"},
		{[]string{"--metrics-listen", ":9470", "--allow-wildcard"}, ":9470", ""},
		{[]string{"--metrics-listen", "localhost"}, "", "host:port"},
		{[]string{"--allow-wildcard"}, "", "only with --metrics-listen"},
	} {
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		f := AddFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		addr, err := f.Addr()
		switch {
		case c.wantErr == "" && (err != nil || addr != c.addr):
			t.Errorf("%q: %q, %v; want %q", c.args, addr, err, c.addr)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%q: error %v, want one saying %q", c.args, err, c.wantErr)
		}
	}
}

// An Endpoint serves its registry over HTTP until its context ends.
func TestEndpoint(t *testing.T) {
	e, err := Listen("127.0.0.1:0", 4)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { e.Serve(ctx, slog.New(slog.DiscardHandler)); close(served) }()
	defer func() { cancel(); <-served }()
	e.Second(running, Second{Transactions: 42})
	resp, err := http.Get("http://" + e.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), "wirelab_run_machine_cpus 4") || !strings.Contains(string(body), key("wirelab_run_transactions_total", running)+" 42") {
		t.Errorf("HTTP %d:\n%s", resp.StatusCode, body)
	}
}
