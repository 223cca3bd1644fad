package study

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

func TestSplitThreads(t *testing.T) {
	for _, c := range []struct {
		threads, n int
		want       []int
	}{
		{8, 2, []int{4, 4}}, {7, 3, []int{3, 2, 2}}, {2, 2, []int{1, 1}}, {5, 1, []int{5}}, {2048, 3, []int{683, 683, 682}},
	} {
		got, err := SplitThreads(c.threads, c.n)
		if err != nil || len(got) != len(c.want) {
			t.Fatalf("SplitThreads(%d, %d) = %v, %v; want %v", c.threads, c.n, got, err, c.want)
		}
		sum := 0
		for i := range got {
			sum += got[i]
			if got[i] != c.want[i] {
				t.Errorf("SplitThreads(%d, %d) = %v, want %v", c.threads, c.n, got, c.want)
			}
		}
		if sum != c.threads {
			t.Errorf("SplitThreads(%d, %d) runs %d threads", c.threads, c.n, sum)
		}
	}
	if _, err := SplitThreads(1, 2); err == nil || !strings.Contains(err.Error(), "--threads 1: fewer threads than the 2 client hosts") {
		t.Errorf("1 thread on 2 clients: %v", err)
	}
	if err := CheckSplit([]int{4, 1}, 2); err == nil {
		t.Error("CheckSplit passed a thread count below the clients")
	}
	if err := CheckSplit([]int{1}, 1); err != nil {
		t.Errorf("one client takes any thread count: %v", err)
	}
}

func hist(bs ...stats.Bucket) *stats.Histogram {
	h := stats.NewHistogram(bs)
	return &h
}

// The merged point's percentiles come from every client's transactions: client A has
// 1900 at 1 ms and 100 at 50 ms (p95 1 ms), client B 100 at 30 ms (p95 30 ms). Of the
// 2100 together the 1995th is at 30 ms and the 2079th at 50 ms: the merge's p95 and p99,
// where averaging the clients' p95 would say 15.5 ms.
func TestMergeLoadsMergesHistograms(t *testing.T) {
	b1, b30, b50 := stats.BucketOf(1), stats.BucketOf(30), stats.BucketOf(50)
	a := &Load{Ticks: []Tick{{T: 1, TPS: 100, QPS: 1600, LatP95Ms: 1}, {T: 2, TPS: 120, QPS: 1920, LatP95Ms: 1.2}, {T: 3, TPS: 110}},
		Totals: &Totals{TPS: 110, QPS: 1760, LatAvgMs: 4, LatP95Ms: b1, Errors: 1, LatMaxMs: 51,
			Histogram: hist(stats.Bucket{Ms: b1, Count: 1900}, stats.Bucket{Ms: b50, Count: 100})}}
	b := &Load{Ticks: []Tick{{T: 1, TPS: 10, QPS: 160, LatP95Ms: 30}, {T: 2, TPS: 12, QPS: 192, LatP95Ms: 31}},
		Totals: &Totals{TPS: 11, QPS: 176, LatAvgMs: 30, LatP95Ms: b30, Errors: 2, LatMaxMs: 33,
			Histogram: hist(stats.Bucket{Ms: b30, Count: 100})}}
	m := mergeLoads([]*Load{a, b})
	if len(m.Ticks) != 2 {
		t.Fatalf("%d merged seconds, want the 2 both clients reported", len(m.Ticks))
	}
	if tk := m.Ticks[1]; tk.T != 2 || tk.TPS != 132 || tk.QPS != 2112 || tk.LatP95Ms != 31 {
		t.Errorf("second 2 merged: %+v, want TPS 132, QPS 2112, p95 the larger (31)", tk)
	}
	tot := m.Totals
	if tot.TPS != 121 || tot.QPS != 1936 || tot.Errors != 3 || tot.LatMaxMs != 51 {
		t.Errorf("totals %+v: want TPS 121, QPS 1936, 3 errors, max 51 ms", *tot)
	}
	if tot.Histogram == nil || tot.Histogram.Count() != 2100 {
		t.Fatalf("merged histogram %+v, want 2100 transactions", tot.Histogram)
	}
	if tot.LatP95Ms != b30 || tot.Histogram.Percentile(99) != b50 {
		t.Errorf("merged p95 %.3f, p99 %.3f; want %.3f and %.3f", tot.LatP95Ms, tot.Histogram.Percentile(99), b30, b50)
	}
	if want := (110*4 + 11*30) / 121.0; math.Abs(tot.LatAvgMs-want) > 1e-9 {
		t.Errorf("mean latency %.3f, want the transaction-weighted %.3f", tot.LatAvgMs, want)
	}
	// The merged seconds start when the last client's clock started.
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	a.Start, b.Start = t0.Add(time.Second), t0.Add(1500*time.Millisecond)
	if m := mergeLoads([]*Load{a, b}); !m.Start.Equal(b.Start) {
		t.Errorf("merged start %v, want the later client's %v", m.Start, b.Start)
	}
	// Without every client's histogram there is no merged one (and no averaged percentile).
	b.Totals.Histogram = nil
	if m := mergeLoads([]*Load{a, b}); m.Totals.Histogram != nil {
		t.Error("a merge with a client lacking its histogram has one")
	}
}

// A merged point's TPS is the sum of its clients' over the same seconds, and each client
// keeps its threads, its own percentiles, wire and CPU.
func TestClientLoadsSumToThePoint(t *testing.T) {
	c := LoadCell{Study: "run", Series: "20mbit", Threads: 5, Duration: 3 * time.Second, Warmup: time.Second, ClientHost: lab.Client}
	a := &Load{Ticks: []Tick{{T: 1, TPS: 50}, {T: 2, TPS: 100}, {T: 3, TPS: 110}, {T: 4, TPS: 90}, {T: 5, TPS: 7}},
		Totals: &Totals{TPS: 99, Histogram: hist(stats.Bucket{Ms: stats.BucketOf(2), Count: 300})}}
	b := &Load{Ticks: []Tick{{T: 1, TPS: 20}, {T: 2, TPS: 40}, {T: 3, TPS: 44}, {T: 4, TPS: 36}},
		Totals: &Totals{TPS: 40, Histogram: hist(stats.Bucket{Ms: stats.BucketOf(5), Count: 120})}}
	ss := func(up float64) []metrics.Sample {
		var out []metrics.Sample
		for i := 0; i < 5; i++ {
			out = append(out, metrics.Sample{UpBytesPerS: up, DownBytesPerS: 10 * up, CPUClient: up / 1000, CPUServer: 0.5})
		}
		return out
	}
	per := [][]metrics.Sample{ss(1000), ss(400)}
	parts := []loadPart{{ClientHost{lab.Client, "app1"}, 3}, {ClientHost{ClientRole(1), "app2"}, 2}}
	loads := []*Load{a, b}
	p := result.Point{DurationS: 3, WarmupS: 1, Threads: 5, LinkRateBps: 80000}
	closedLoop(&p, c, mergeLoads(loads), metrics.SumClients(per), true, result.Cores{Shared: 2}, 2)
	cls := clientLoads(c, parts, loads, per, time.Time{}, nil)
	if len(cls) != 2 || cls[0].Host != "app1" || cls[0].Threads != 3 || cls[1].Host != "app2" || cls[1].Threads != 2 {
		t.Fatalf("clients %+v", cls)
	}
	if math.Abs(p.TPS-(cls[0].TPS+cls[1].TPS)) > 1e-9 || math.Abs(p.TPS-140) > 1e-9 {
		t.Errorf("point TPS %.2f, clients %.2f + %.2f: want the sum, 140 (seconds 2-4)", p.TPS, cls[0].TPS, cls[1].TPS)
	}
	if math.Abs(p.WireBytesPerSUp-1400) > 1e-9 || math.Abs(cls[1].WireBytesPerSUp-400) > 1e-9 || math.Abs(cls[0].CPUClient-1) > 1e-9 {
		t.Errorf("wire up %.0f (app2 %.0f), app1 CPU %.2f: want 1400, 400, 1", p.WireBytesPerSUp, cls[1].WireBytesPerSUp, cls[0].CPUClient)
	}
	// Each client's link has the rate: 14000 B/s down over two links of 10000 B/s.
	if math.Abs(p.LinkUtilization-0.7) > 1e-9 {
		t.Errorf("link utilisation %.3f, want the busier direction over both links: 0.7", p.LinkUtilization)
	}
	if cls[0].LatP95Ms != stats.BucketOf(2) || cls[1].LatP95Ms != stats.BucketOf(5) || p.LatP95Ms != stats.BucketOf(5) {
		t.Errorf("p95: app1 %.3f, app2 %.3f, point %.3f", cls[0].LatP95Ms, cls[1].LatP95Ms, p.LatP95Ms)
	}
	if got := cls[1].TPSSeconds; len(got) != 3 || got[0] != 40 {
		t.Errorf("app2's measured seconds %v, want [40 44 36]", got)
	}
}

// Clients disagree when their intervals of TPS per thread do not overlap; short series
// are taken at their range.
func TestClientsDisagree(t *testing.T) {
	steady := func(threads int, perThread float64, n int) result.ClientLoad {
		var xs []float64
		for i := 0; i < n; i++ {
			xs = append(xs, float64(threads)*perThread*(1+0.02*float64(i%3-1)))
		}
		return result.ClientLoad{Threads: threads, TPSSeconds: xs}
	}
	for _, c := range []struct {
		name string
		cs   []result.ClientLoad
		want bool
	}{
		{"same per thread, unequal shares", []result.ClientLoad{steady(3, 100, 20), steady(2, 100, 20)}, false},
		{"one slower", []result.ClientLoad{steady(4, 100, 20), steady(4, 70, 20)}, true},
		{"short, overlapping", []result.ClientLoad{steady(4, 100, 3), steady(4, 101, 3)}, false},
		{"short, apart", []result.ClientLoad{steady(4, 100, 3), steady(4, 80, 3)}, true},
	} {
		if got := result.ClientsDisagree(c.cs); got != c.want {
			t.Errorf("%s: disagree = %v, want %v", c.name, got, c.want)
		}
	}
}

// One saturated client host is the point's client-side limit, though the clients' summed
// CPU is half their summed cores: app1 runs 1.9 of its 2 cores, app2 0.2 of its 2.
func TestBusiestClientDecidesTheClientVerdict(t *testing.T) {
	c := LoadCell{Study: "run", Series: "unlimited", Threads: 64, Duration: 3 * time.Second, ClientHost: lab.Client}
	ld := func(tps float64) *Load {
		return &Load{Ticks: []Tick{{T: 1, TPS: tps}, {T: 2, TPS: tps}, {T: 3, TPS: tps}}, Totals: &Totals{TPS: tps}}
	}
	loads := []*Load{ld(900), ld(100)}
	ss := func(cpu float64) []metrics.Sample {
		return []metrics.Sample{{CPUClient: cpu, CPUServer: 1}, {CPUClient: cpu, CPUServer: 1}, {CPUClient: cpu, CPUServer: 1}}
	}
	per := [][]metrics.Sample{ss(1.9), ss(0.2)}
	hosts := []result.Host{{Role: "client", Name: "app1", Cores: 2}, {Role: "client", Name: "app2", Cores: 2}, {Role: "server", Name: "db", Cores: 8}}
	parts := []loadPart{{ClientHost{lab.Client, "app1"}, 32}, {ClientHost{ClientRole(1), "app2"}, 32}}
	p := result.Point{DurationS: 3, Threads: 64}
	p.Clients = clientLoads(c, parts, loads, per, time.Time{}, hosts)
	if p.Clients[0].Cores != 2 || p.Clients[1].Cores != 2 {
		t.Fatalf("client cores %d, %d; want each host's 2", p.Clients[0].Cores, p.Clients[1].Cores)
	}
	closedLoop(&p, c, mergeLoads(loads), metrics.SumClients(per), true, result.HostCores(hosts), 2)
	if p.Bottleneck != "client-cpu" || !strings.Contains(p.BottleneckWhy, "app1, the busiest of 2 client hosts") {
		t.Errorf("verdict %s (%s), want client-cpu naming app1", p.Bottleneck, p.BottleneckWhy)
	}
	if math.Abs(p.CPUClient-2.1) > 1e-9 {
		t.Errorf("point client CPU %.2f, want the sum 2.1", p.CPUClient)
	}
}
