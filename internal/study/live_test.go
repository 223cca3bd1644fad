package study

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/livemetrics"
	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// recorder is a Publisher that keeps every call, in order.
type recorder struct {
	mu      sync.Mutex
	calls   []string // "second", "latency", "end"
	labels  []livemetrics.Labels
	seconds []livemetrics.Second
	hists   []stats.Histogram
}

func (r *recorder) Second(l livemetrics.Labels, s livemetrics.Second) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls, r.labels, r.seconds = append(r.calls, "second"), append(r.labels, l), append(r.seconds, s)
}

func (r *recorder) Latency(l livemetrics.Labels, h stats.Histogram) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls, r.labels, r.hists = append(r.calls, "latency"), append(r.labels, l), append(r.hists, h)
}

func (r *recorder) End(l livemetrics.Labels) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls, r.labels = append(r.calls, "end"), append(r.labels, l)
}

// sum is the seconds' counts added up, and the last driver line among them.
func (r *recorder) sum() (livemetrics.Second, *livemetrics.DriverSecond) {
	var s livemetrics.Second
	var last *livemetrics.DriverSecond
	for _, x := range r.seconds {
		s.Transactions, s.Queries, s.Errors = s.Transactions+x.Transactions, s.Queries+x.Queries, s.Errors+x.Errors
		s.WireUpBytes, s.WireDownBytes = s.WireUpBytes+x.WireUpBytes, s.WireDownBytes+x.WireDownBytes
		s.CPUServerS, s.CPUMachineS = s.CPUServerS+x.CPUServerS, s.CPUMachineS+x.CPUMachineS
		s.DelayLineCPUS += x.DelayLineCPUS
		if x.Driver != nil {
			last = x.Driver
		}
	}
	return s, last
}

// totalsSampler is a Sampler whose totals the test sets.
type totalsSampler struct {
	mu  sync.Mutex
	tot metrics.Totals
}

func (s *totalsSampler) Start(context.Context) error { return nil }
func (s *totalsSampler) Stop() []metrics.Sample      { return nil }
func (s *totalsSampler) Totals() metrics.Totals {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tot
}
func (s *totalsSampler) set(t metrics.Totals) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tot = t
}

// samplerBackend hands out its sampler and a wire whose delay line writes its stats to
// stats; the methods a measurement does not use are the embedded nil Backend's.
type samplerBackend struct {
	Backend
	s     *totalsSampler
	stats string
}

func (b *samplerBackend) Sampler(Sides) Sampler { return b.s }
func (b *samplerBackend) Wire() WireState       { return WireState{DelayerStats: b.stats} }

// writeDelayer writes the delay line's stats file as the delayer does.
func writeDelayer(t *testing.T, path string, pid int, updated time.Time, cpu time.Duration) {
	t.Helper()
	b, err := json.Marshal(link.DelayerStats{Pid: pid, Updated: updated, CPUNs: int64(cpu)})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// A measurement publishes what its drivers' lines counted, its latest line merged over
// two client hosts, the sampler's totals and the delay line's CPU, under the point's
// labels; the driver's histogram once; then the point's end.
func TestSampledPublishesThePointLive(t *testing.T) {
	stats0 := filepath.Join(t.TempDir(), "delayer.json")
	t0 := time.Now()
	writeDelayer(t, stats0, 7, t0, time.Second)
	b := &samplerBackend{s: &totalsSampler{}, stats: stats0}
	rec := &recorder{}
	e := &Env{Backend: b, publish: rec, Cond: link.Condition{RateBps: 20_000_000, Delay: 5 * time.Millisecond}}
	p := result.Point{Study: "run", Series: "20mbit", Channel: "direct", Threads: 8}
	hist := stats.NewHistogram([]stats.Bucket{{Ms: 2, Count: 300}})
	_, _, _, err := e.sampled(t.Context(), Sides{Point: &p}, func(context.Context) error {
		d1, d2 := e.live.driver(), e.live.driver()
		d1.tick(Tick{T: 1, TPS: 100, QPS: 1000, LatP95Ms: 5})
		d1.tick(Tick{T: 2, TPS: 120, QPS: 1200, LatP95Ms: 6, Errors: 1})
		d2.tick(Tick{T: 1, TPS: 50, QPS: 500, LatP95Ms: 9})
		d1.latency(&hist)
		d2.latency(nil) // a driver without a histogram
		b.s.set(metrics.Totals{UpBytes: 1000, DownBytes: 8000, CPUServerSec: 1.5, CPUTotalSec: 3})
		writeDelayer(t, stats0, 7, t0.Add(time.Second), 1250*time.Millisecond)
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.live != nil {
		t.Error("the feed outlives its measurement")
	}
	want := livemetrics.Labels{Study: "run", Series: "20mbit", Channel: "direct", Threads: 8, Link: "rate 20mbit, delay 5ms"}
	for _, l := range rec.labels {
		if l != want {
			t.Fatalf("published as %+v, want %+v", l, want)
		}
	}
	if n := len(rec.calls); n < 3 || rec.calls[n-1] != "end" || rec.calls[n-2] != "second" || strings.Count(strings.Join(rec.calls, " "), "latency") != 1 {
		t.Errorf("calls %v: want seconds, one latency, a last second, then the end", rec.calls)
	}
	s, last := rec.sum()
	if !near(s.Transactions, 270) || !near(s.Queries, 2700) || !near(s.Errors, 1) {
		t.Errorf("counted %v transactions, %v queries, %v errors; want 270, 2700, 1", s.Transactions, s.Queries, s.Errors)
	}
	if s.WireUpBytes != 1000 || s.WireDownBytes != 8000 || !near(s.CPUServerS, 1.5) || !near(s.CPUMachineS, 3) {
		t.Errorf("sampler's growth: %+v", s)
	}
	if !near(s.DelayLineCPUS, 0.25) {
		t.Errorf("delay line CPU %v s, want 0.25", s.DelayLineCPUS)
	}
	if last == nil || !near(last.TPS, 170) || last.LatP95Ms != 9 {
		t.Errorf("latest line %+v: want TPS 120+50 and the larger p95, 9", last)
	}
	if len(rec.hists) != 1 || rec.hists[0].Count() != 300 {
		t.Errorf("histograms %v", rec.hists)
	}
}

// Without a Publisher, or a measurement that names no point, nothing is published and the
// drivers' hooks do nothing.
func TestSampledWithoutPublisher(t *testing.T) {
	for name, e := range map[string]*Env{
		"no publisher": {Backend: &samplerBackend{s: &totalsSampler{}}},
		"no point":     {Backend: &samplerBackend{s: &totalsSampler{}}, publish: &recorder{}},
	} {
		sides := Sides{}
		if name == "no publisher" {
			sides.Point = &result.Point{Study: "run"}
		}
		_, _, _, err := e.sampled(t.Context(), sides, func(context.Context) error {
			if e.live != nil {
				t.Errorf("%s: a feed runs", name)
			}
			d := e.live.driver()
			d.tick(Tick{T: 1, TPS: 10})
			d.latency(&stats.Histogram{})
			return nil
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := e.publish.(*recorder); ok && len(r.calls) > 0 {
			t.Errorf("%s: published %v", name, r.calls)
		}
	}
}

// The delay line's CPU counts from the first reading; a stats file not rewritten since
// adds nothing, a restarted delayer starts a new count.
func TestDelayLineClock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "delayer.json")
	t0 := time.Now()
	writeDelayer(t, path, 7, t0, time.Second)
	c := newDelayLineClock(path)
	for _, step := range []struct {
		pid  int
		at   time.Duration
		cpu  time.Duration
		want float64
	}{
		{7, 0, time.Second, 0},                          // not rewritten
		{7, time.Second, 1300 * time.Millisecond, 0.3},  // a second later
		{8, 2 * time.Second, 100 * time.Millisecond, 0}, // restarted
		{8, 3 * time.Second, 150 * time.Millisecond, 0.05},
	} {
		writeDelayer(t, path, step.pid, t0.Add(step.at), step.cpu)
		if got := c.since(); !near(got, step.want) {
			t.Errorf("pid %d at +%s cpu %s: %v s, want %v", step.pid, step.at, step.cpu, got, step.want)
		}
	}
	if none := (&delayLineClock{}); none.since() != 0 {
		t.Error("a wire without a delay line has a cost")
	}
}

// replay is a launcher that prints a captured sysbench run's output line by line.
type replay struct{ out string }

func (r replay) Launch(_ context.Context, s execx.Streamed) (string, string, error) {
	for _, line := range strings.Split(r.out, "\n") {
		s.OnStdout(line)
	}
	return r.out, "", nil
}
func (replay) TempFile(context.Context, []byte) (string, func(), error) { return "", func() {}, nil }
func (replay) Local() bool                                              { return true }

// sysbench's per-second lines and its histogram reach the point's feed as they come, from
// a real run's output.
func TestRunSysbenchPublishes(t *testing.T) {
	out, err := os.ReadFile("../sysbench/testdata/ro_histogram_reset.txt")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	e := &Env{Backend: &samplerBackend{s: &totalsSampler{}}, publish: rec}
	p := result.Point{Study: "run", Series: "unlimited", Threads: 4}
	var sb *Sysbench
	_, _, _, err = e.sampled(t.Context(), Sides{Point: &p}, func(ctx context.Context) error {
		var err error
		sb, err = RunSysbench(ctx, sysbench.Options{Workload: "oltp_read_only", Tables: 1, TableSize: 1000, Threads: 4,
			Time: 3 * time.Second, Histogram: true, Launcher: replay{string(out)}}, nil, e)
		return err
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want float64
	for _, tk := range sb.Ticks() {
		want += tk.TPS
	}
	s, last := rec.sum()
	if len(sb.Ticks()) != 3 || !near(s.Transactions, want) || last == nil || last.TPS != sb.Ticks()[2].TPS {
		t.Errorf("published %v transactions, latest %+v; the run's %d lines say %v", s.Transactions, last, len(sb.Ticks()), want)
	}
	if len(rec.hists) != 1 || sb.Summary.Histogram == nil || rec.hists[0].Count() != sb.Summary.Histogram.Count() {
		t.Errorf("histograms published %v, the run's %v", rec.hists, sb.Summary.Histogram)
	}
}

// While the load runs, a second is published every second, not only at the end.
func TestLiveFeedPublishesWhileRunning(t *testing.T) {
	b := &samplerBackend{s: &totalsSampler{}}
	rec := &recorder{}
	e := &Env{Backend: b, publish: rec}
	p := result.Point{Study: "run", Threads: 1}
	_, _, _, err := e.sampled(t.Context(), Sides{Point: &p}, func(context.Context) error {
		e.live.driver().tick(Tick{T: 1, TPS: 100})
		b.s.set(metrics.Totals{UpBytes: 500})
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			rec.mu.Lock()
			n := len(rec.seconds)
			rec.mu.Unlock()
			if n > 0 {
				return nil
			}
		}
		t.Error("no second published within 5 s of the load's start")
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first := rec.seconds[0]; first.Transactions != 100 || first.WireUpBytes != 500 || first.Driver == nil || first.Driver.TPS != 100 {
		t.Errorf("the first second: %+v", first)
	}
}
