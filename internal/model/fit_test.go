package model

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/result"
)

// quickFits is `make run` on the reference box (study bandwidth n2: 20mbit and unlimited,
// plain and compressed, threads 1, 8, 32), captured in testdata.
func quickFits(t *testing.T) []*Fit {
	t.Helper()
	r, err := result.Read("testdata/quick")
	if err != nil {
		t.Fatal(err)
	}
	fits, err := Group(r.Points)
	if err != nil {
		t.Fatal(err)
	}
	return fits
}

func TestGroupSplitsVariants(t *testing.T) {
	fits := quickFits(t)
	if len(fits) != 2 || fits[0].Label != "plain" || fits[1].Label != "compression" {
		t.Fatalf("fits %v, want plain and compression", labels(fits))
	}
	plain := fits[0]
	if len(plain.Points) != 6 || len(plain.Series) != 2 {
		t.Errorf("plain holds %d points of %v, want 6 of 20mbit and unlimited", len(plain.Points), plain.Series)
	}
	// The post's figure: about 42 KB server→client per read-only transaction, 16 statements.
	if plain.WireBytesDown < 41000 || plain.WireBytesDown > 43000 || math.Abs(plain.RoundTrips-16) > 0.1 {
		t.Errorf("plain: %.0f B down, %.2f round trips; want ~42000 and 16", plain.WireBytesDown, plain.RoundTrips)
	}
	if c := fits[1]; c.WireBytesDown > 0.6*plain.WireBytesDown {
		t.Errorf("compressed profile sends %.0f B down, not much less than plain's %.0f", c.WireBytesDown, plain.WireBytesDown)
	}
}

func TestGroupWithoutProfiles(t *testing.T) {
	pts := []result.Point{{Series: "20mbit", Threads: 1, TPS: 60}}
	if _, err := Group(pts); !errors.Is(err, ErrNoProfile) {
		t.Errorf("err = %v, want ErrNoProfile", err)
	}
}

func TestCheckOnTheRunsOwnPoints(t *testing.T) {
	for _, f := range quickFits(t) {
		cs, err := f.Check()
		if err != nil {
			t.Fatal(err)
		}
		med, worst := ErrorSummary(cs)
		if med > 0.02 || worst > 0.05 {
			t.Errorf("%s: error median %.3f worst %.3f on its own points, want ≤ 2%% and 5%%", f.Label, med, worst)
		}
		for _, c := range cs {
			if c.RateBps > 0 && c.Bottleneck != StationDownlink {
				t.Errorf("%s %s %d threads: model says %s, the shaped link is what binds", f.Label, c.Series, c.Threads, c.Bottleneck)
			}
		}
	}
}

func TestPredictOneGigabitCapsAtRateOverBytes(t *testing.T) {
	plain := quickFits(t)[0]
	m := Machine{ServerCores: 48, ClientCores: 48}
	ps, err := plain.Predict(Link{RateBps: 1e9, RTT: 150 * time.Microsecond}, m, []int{1, 2048})
	if err != nil {
		t.Fatal(err)
	}
	ceiling := 1e9 / 8 / plain.WireBytesDown
	if p := ps[1]; math.Abs(p.TPS/ceiling-1) > 0.001 || p.Bottleneck != StationDownlink {
		t.Errorf("2048 threads: %.0f TPS (%s), want the link's %.0f", p.TPS, p.Bottleneck, ceiling)
	}
	// One thread on a physical link waits for everything in turn: the sum of the demands.
	st := plain.Stations(Link{RateBps: 1e9, RTT: 150 * time.Microsecond}, m, 1)
	sum := 0.0
	for _, s := range st {
		sum += s.Demand
	}
	if p := ps[0]; math.Abs(p.LatAvgMs/1000/sum-1) > 1e-9 || p.Bottleneck != StationRoundTrips {
		t.Errorf("1 thread: %.3f ms (%s), want Σ demands %.3f ms, latency-bound", p.LatAvgMs, p.Bottleneck, sum*1000)
	}
}

func TestShapedLinkIsACap(t *testing.T) {
	plain := quickFits(t)[0]
	l := Link{RateBps: 20e6, Shaped: true}
	ps, err := plain.Predict(l, Machine{SharedCores: 2}, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	phys, err := plain.Predict(Link{RateBps: 20e6}, Machine{SharedCores: 2}, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	want := 20e6 / 8 / plain.WireBytesDown
	if math.Abs(ps[0].TPS/want-1) > 1e-9 {
		t.Errorf("shaped 20mbit, 1 thread: %.2f TPS, want the cap %.2f", ps[0].TPS, want)
	}
	if phys[0].TPS >= ps[0].TPS {
		t.Errorf("a physical link (%.2f TPS) should be slower at one thread than a token bucket (%.2f)", phys[0].TPS, ps[0].TPS)
	}
}

func TestSeparateHostsSplitTheKernel(t *testing.T) {
	plain := quickFits(t)[0]
	st := plain.Stations(Link{}, Machine{ServerCores: 4, ClientCores: 8}, 32)
	c := plain.cpuFor(32)
	got := map[string]Station{}
	for _, s := range st {
		got[s.Name] = s
	}
	kernel := c.machine - c.server - c.client
	if s := got[StationServerCPU]; s.Servers != 4 || math.Abs(s.Demand-(c.server+kernel/2)) > 1e-12 {
		t.Errorf("server station %+v, want 4 cores and %.6f s", s, c.server+kernel/2)
	}
	if s := got[StationClientCPU]; s.Servers != 8 || math.Abs(s.Demand+got[StationServerCPU].Demand-c.machine) > 1e-12 {
		t.Errorf("client station %+v: the two sides must add up to the machine's %.6f s", s, c.machine)
	}
	if _, ok := got[StationUplink]; ok {
		t.Error("an unlimited link has no link station")
	}
}

func TestCPUBetweenThreadCounts(t *testing.T) {
	f := &Fit{cpu: []cpuAt{{threads: 1, machine: 1}, {threads: 8, machine: 4}, {threads: 32, machine: 6}}}
	for _, c := range []struct {
		n    int
		want float64
	}{{1, 1}, {2, 2}, {4, 3}, {16, 5}, {2048, 6}} {
		if got := f.cpuFor(c.n).machine; math.Abs(got-c.want) > 1e-12 {
			t.Errorf("cpuFor(%d) = %g, want %g (linear in log2 threads, held outside)", c.n, got, c.want)
		}
	}
}

func TestCalibratePerRoundTrip(t *testing.T) {
	// One thread, no link limit: latency 16 × (1 ms + 0.1 ms) + 1 ms of CPU.
	p := result.Point{Series: "rtt", Threads: 1, LinkDelayMs: 0.5, TPS: 1 / 0.0186, QPS: 16 / 0.0186, LatAvgMs: 18.6,
		CPUServer: 0.6 / 18.6, CPUClient: 0.3 / 18.6}
	p.Profile = result.NewProfile(&p, 0, 0, 1/18.6, 2)
	f, err := NewFit("plain", []result.Point{p})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.PerRoundTripS-0.0001) > 1e-9 || f.Overlap != 0 {
		t.Errorf("per round trip %.6f s, overlap %g; want 0.0001 and 0", f.PerRoundTripS, f.Overlap)
	}
	ps, err := f.Predict(Link{RTT: time.Millisecond}, Machine{SharedCores: 2}, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(ps[0].LatAvgMs-18.6) > 1e-6 {
		t.Errorf("the fitted point predicts %.4f ms, want its own 18.6", ps[0].LatAvgMs)
	}
}

func TestCrossover(t *testing.T) {
	fits := quickFits(t)
	comp, plain := fits[1], fits[0]
	m := Machine{ServerCores: 48, ClientCores: 48}
	cs, err := FindCrossover(comp, plain, Link{RTT: 150 * time.Microsecond}, m, []int{2048})
	if err != nil {
		t.Fatal(err)
	}
	c := cs[0]
	if c.Pays != "below" || c.RateBps < 1e9 || c.RateBps > 1e10 {
		t.Fatalf("crossover %+v: the 2019 study brackets it between 1 and 10 gbit", c)
	}
	if math.Abs(c.TPSLean/c.TPSPlain-1) > 0.001 {
		t.Errorf("at the crossover the two predict %.1f and %.1f TPS, want equal", c.TPSLean, c.TPSPlain)
	}
	for _, r := range []float64{c.RateBps / 2, c.RateBps * 2} {
		l := Link{RateBps: int64(r), RTT: 150 * time.Microsecond}
		a, _ := comp.Predict(l, m, []int{2048})
		b, _ := plain.Predict(l, m, []int{2048})
		if (r < c.RateBps) != (a[0].TPS > b[0].TPS) {
			t.Errorf("at %.3g bit/s compression %.0f vs plain %.0f TPS: wrong side of the crossover %.3g", r, a[0].TPS, b[0].TPS, c.RateBps)
		}
	}
	same, err := FindCrossover(plain, plain, Link{}, m, []int{8})
	if err != nil || same[0].Pays != "never" {
		t.Errorf("a profile against itself: %+v, %v; want never", same, err)
	}
}

func TestPredictAgainstNamesTheCPU(t *testing.T) {
	// --rtt 2ms at 32 threads: the lab's delayer takes CPU the fit (no delay) never saw.
	plain := quickFits(t)[0]
	r, err := result.Read("testdata/rtt2")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Points {
		a, err := plain.PredictAgainst(p)
		if err != nil {
			t.Fatal(err)
		}
		switch p.Threads {
		case 32:
			if a.Err < 0.5 || a.Miss != StationCPU || math.Abs(a.ErrWith) > 0.05 {
				t.Errorf("32 threads: error %+.2f explained by %q (%+.2f with it), want a large miss explained by the cpu", a.Err, a.Miss, a.ErrWith)
			}
		default:
			if math.Abs(a.Err) > 0.1 {
				t.Errorf("%d threads: error %+.2f, want within 10%%", p.Threads, a.Err)
			}
		}
	}
}

// The lab's delay line costs CPU no profile holds; where it explains a miss, the lab is
// named rather than the workload's CPU.
func TestPredictAgainstNamesTheLab(t *testing.T) {
	f := benchProfile()
	f.cpu = []cpuAt{{threads: 32, machine: 0.0011}}
	// CPU-bound at 0.2 ms: 2 cores over 1.1 ms of the workload and 0.6 ms of the lab's.
	p := result.Point{Series: "unlimited", Threads: 32, LinkDelayMs: 0.1, TPS: 2 / 0.0017,
		Profile: &result.Profile{WireBytesUp: 2200, WireBytesDown: 42000, RoundTrips: 16, Threads: 32, Cores: 2,
			CPUMachineS: 0.0011, LabCPUS: 0.0006, TPS: 2 / 0.0017}}
	a, err := f.PredictAgainst(p)
	if err != nil {
		t.Fatal(err)
	}
	if a.Miss != StationLab || math.Abs(a.ErrWith) > 0.05 || a.Measured != 0.0006 {
		t.Errorf("miss %q (error %+.1f%%, with it %+.1f%%, measured %g), want the lab's delay line",
			a.Miss, a.Err*100, a.ErrWith*100, a.Measured)
	}
}

func TestMachineValidate(t *testing.T) {
	for _, m := range []Machine{{ServerCores: 0, ClientCores: 4}, {ServerCores: 4, ClientCores: MaxCores + 1}, {SharedCores: -1}} {
		if m.Validate() == nil {
			t.Errorf("%+v accepted", m)
		}
	}
	if err := (Machine{ServerCores: 48, ClientCores: 48}).Validate(); err != nil {
		t.Error(err)
	}
}

func labels(fs []*Fit) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Label)
	}
	return out
}
