package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/nstest"
	"github.com/wirelab/wirelab/internal/replication"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
	"github.com/wirelab/wirelab/internal/tunnel"
)

// metricsPort is where both tunnel ends serve metrics, on their hosts' lab addresses.
const metricsPort = "9464"

// promAddr is where the test's Prometheus listens: the wire host's address toward the
// server, from where it reaches both ends without crossing the shaped path twice.
var promAddr = lab.WireAddr[lab.Server] + ":9090"

// observed is the replication study with the test's own steps: setup after the study's
// (the lab and its servers up), and after each point (caught up, checked, the lab still up).
type observed struct {
	*replication.Study
	setup func(ctx context.Context) error
	after func(ctx context.Context, p result.Point)
}

func (o observed) Setup(ctx context.Context, e *study.Env) error {
	if err := o.Study.Setup(ctx, e); err != nil || o.setup == nil {
		return err
	}
	return o.setup(ctx)
}

func (o observed) Measure(ctx context.Context, e *study.Env, c study.Cell) (result.Point, error) {
	p, err := o.Study.Measure(ctx, e, c)
	if err == nil && o.after != nil {
		o.after(ctx, p)
	}
	return p, err
}

// tunnelReplicationOptions: MariaDB replication through the tunnel (zstd) at 20 ms RTT under
// a steady oltp_write_only load, small tables, for a short run.
func tunnelReplicationOptions() replication.Options {
	return replication.Options{Channels: []replication.Channel{replication.Tunnel}, RTTs: []time.Duration{20 * time.Millisecond},
		Link: link20ms, LagQPS: 300, Duration: 20 * time.Second, SearchDuration: 5 * time.Second, SearchFactor: 2,
		SearchMaxQPS: 60, Precision: 0.05, CatchUpTimeout: 2 * time.Minute, Tables: 2, TableSize: 1000, Threads: 2,
		RandType: "uniform", BufferPool: "128M", Rule: replication.DefaultRule,
		Tunnel: lab.TunnelOptions{Knobs: tunnel.Knobs{Compress: tunnel.Zstd}}}
}

// labRun runs a study in a fresh namespace lab, which it hands to the test's steps (lab)
// once up, and checks that the run left nothing behind.
type labRun struct {
	t   *testing.T
	lab *lab.Lab
}

func (r *labRun) run(st study.Study) *result.Run {
	t := r.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s := &study.Session{Logger: log, StateDir: t.TempDir(), Self: bin, Progress: testLog{t}, OutDir: t.TempDir()}
	s.Open = func(ctx context.Context, needs study.Needs, owner *lab.Owner) (study.Backend, error) {
		l, err := lab.Up(ctx, lab.Options{Hosts: needs.Hosts, Condition: needs.Condition, Shaper: needs.Shaper,
			Congestion: needs.Congestion, StateDir: s.StateDir, Self: s.Self, Logger: s.Logger, Owner: owner})
		if err != nil {
			return nil, err
		}
		r.lab = l
		return study.LabBackend(l, s.Self, needs.Hosts...), nil
	}
	run, err := s.Run(ctx, ctx, st)
	if err != nil {
		t.Fatalf("replication through the tunnel: %v", err)
	}
	assertGone(t, run.RunID)
	return run
}

type testLog struct{ t *testing.T }

func (w testLog) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// TestTunnelMetricsPrometheus: a real Prometheus scrapes both tunnel ends every second
// during a replication run at 20 ms; the compression ratio PromQL computes from the byte
// counters is the exit's --stats line's within 1%, every metric is there with a HELP line
// and both ends pass promtool.
func TestTunnelMetricsPrometheus(t *testing.T) {
	skipUnlessRoot(t)
	for _, tool := range []string{"prometheus", "promtool"} {
		if _, err := exec.LookPath(tool); err != nil {
			nstest.Unavailable(t, "%s not installed (Debian package prometheus)", tool)
		}
	}
	o := tunnelReplicationOptions()
	o.Scenarios = []int{1}
	o.Tunnel.ExitMetrics = lab.HostAddr[lab.Server] + ":" + metricsPort
	o.Tunnel.EntryMetrics = lab.HostAddr[lab.Replica] + ":" + metricsPort
	checked := false
	r := &labRun{t: t}
	st := observed{Study: replication.New(o), setup: func(ctx context.Context) error { return startPrometheus(ctx, r.lab) },
		after: func(ctx context.Context, p result.Point) {
			checked = true
			if !p.Usable() {
				t.Errorf("the point failed: %s", p.FailReason)
			}
			checkTunnelMetrics(t, r.lab, []string{o.Tunnel.ExitMetrics, o.Tunnel.EntryMetrics})
		}}
	r.run(st)
	if !checked {
		t.Fatal("no point was measured")
	}
}

// startPrometheus runs Prometheus in the wire host, scraping both ends every second, its
// configuration and storage in the lab's temp dir; the lab stops it.
func startPrometheus(ctx context.Context, l *lab.Lab) error {
	dir := filepath.Join(l.State.TempDir, "prometheus")
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return err
	}
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: wirelab-tunnel\n"+
		"    static_configs:\n      - targets: ['%s:%s', '%s:%s']\n", lab.HostAddr[lab.Server], metricsPort, lab.HostAddr[lab.Replica], metricsPort)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		return err
	}
	pid, err := l.StartProc(lab.Wire, "prometheus", []string{"prometheus", "--config.file=" + filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path=" + filepath.Join(dir, "data"), "--web.listen-address=" + promAddr, "--log.level=warn"}, nil)
	if err != nil {
		return err
	}
	return lab.AwaitListen(ctx, 9090, lab.ListenProbe{
		Listening: func() bool {
			out, err := l.Exec(ctx, lab.Wire, lab.ListenCheck(9090)...)
			return err == nil && strings.TrimSpace(string(out)) != ""
		},
		Exited: func() bool { return procGone(pid) },
		Tail: func() string {
			b, _ := os.ReadFile(filepath.Join(l.State.TempDir, "prometheus.log"))
			return "\n" + string(b)
		},
	})
}

// procGone reports whether process pid has exited.
func procGone(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err != nil
}

// checkTunnelMetrics compares Prometheus's ratio with the exit's --stats line, once both
// read the counters after the point's catch-up, and checks both ends' exposition.
func checkTunnelMetrics(t *testing.T, l *lab.Lab, ends []string) {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: nstest.DialIn(l.State.NS(lab.Wire))}}
	logPath := filepath.Join(l.State.TempDir, "tunnel-exit.log")
	// A stats line printed after the catch-up (every 10 s), then a scrape after it.
	before := len(statsLines(t, logPath))
	var line string
	for deadline := time.Now().Add(25 * time.Second); line == "" && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if l := statsLines(t, logPath); len(l) > before {
			line = l[len(l)-1]
		}
	}
	if line == "" {
		t.Fatalf("no new --stats line in %s", logPath)
	}
	time.Sleep(2 * time.Second)
	m := regexp.MustCompile(`\| send raw=\S+ wire=\S+ ratio=([0-9.]+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("stats line without a send ratio: %s", line)
	}
	statsRatio, _ := strconv.ParseFloat(m[1], 64)
	q := `sum(wirelab_tunnel_raw_bytes_total{role="exit",direction="send"}) / sum(wirelab_tunnel_wire_bytes_total{role="exit",direction="send"})`
	promRatio := promQuery(t, client, q)
	t.Logf("compression ratio of the replication stream: PromQL %.4f, --stats %.2f", promRatio, statsRatio)
	if statsRatio < 1.5 || math.Abs(promRatio-statsRatio)/statsRatio > 0.01 {
		t.Errorf("PromQL ratio %.4f vs --stats %.2f: want within 1%% (and compression)", promRatio, statsRatio)
	}
	for _, end := range ends {
		text := httpGet(t, client, "http://"+end+"/metrics")
		for _, name := range tunnel.MetricNames() {
			if !strings.Contains(text, "# HELP "+name+" ") {
				t.Errorf("%s: %s missing or without HELP", end, name)
			}
			if n := promQuery(t, client, fmt.Sprintf(`count(%s{instance=%q})`, name, end)); !(n >= 1) {
				t.Errorf("%s: Prometheus has no %s", end, name)
			}
		}
		cmd := exec.Command("promtool", "check", "metrics")
		cmd.Stdin = strings.NewReader(text)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: promtool check metrics: %v\n%s", end, err, out)
		}
	}
}

// statsLines are the --stats lines of a tunnel end's log.
func statsLines(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "tunnel exit: conns=") {
			out = append(out, l)
		}
	}
	return out
}

func httpGet(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d, %v", u, resp.StatusCode, err)
	}
	return string(b)
}

// promQuery is the one value of an instant PromQL query (NaN when it has none).
func promQuery(t *testing.T, c *http.Client, q string) float64 {
	t.Helper()
	var r struct {
		Status string
		Data   struct {
			Result []struct{ Value [2]any }
		}
	}
	body := httpGet(t, c, "http://"+promAddr+"/api/v1/query?query="+url.QueryEscape(q))
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Status != "success" {
		t.Fatalf("query %s: %v: %s", q, err, body)
	}
	if len(r.Data.Result) == 0 {
		return math.NaN()
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("query %s: value %q", q, s)
	}
	return v
}
