package replication

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/tunnel"
)

// The real quick run's goals: the load ratio's fitted interval lies wholly under 4×; the
// wire ratios have no per-second series behind them; one probe passed at the tunnel's
// highest sustained load, so its p99 (1.55 s, 1.30 s over the 250 ms RTT) has no interval.
func TestGoalsFromARealRun(t *testing.T) {
	js := Goals(loadQuick(t))
	if len(js) != 3 || js[0].Goal != "replication-load" || js[1].Goal != "replication-wire" || js[2].Goal != "replication-p99-lag" {
		t.Fatalf("%+v", js)
	}
	load := js[0].Cases[0]
	if js[0].Verdict != tunnel.Missed || !load.Bounded || math.Abs(load.Figure-2.95) > 0.005 || math.Abs(load.Lo-2.25) > 0.005 ||
		math.Abs(load.Hi-3.84) > 0.005 || load.N != 10 || load.Name != "2 Mbit/s, RTT 250 ms" {
		t.Errorf("load %+v", js[0])
	}
	if w := js[1]; w.Verdict != tunnel.NotShown || len(w.Cases) != 2 || w.Cases[0].Name != "300 QPS" || w.Cases[0].Bounded {
		t.Errorf("wire %+v", w)
	}
	lag := js[2].Cases[0]
	if js[2].Verdict != tunnel.NotShown || lag.Bounded || lag.N != 1 || math.Abs(lag.Figure-1.299) > 0.001 ||
		lag.Name != "1710 QPS (the highest sustained), 2 Mbit/s, RTT 250 ms" {
		t.Errorf("p99 lag %+v", js[2])
	}
}

// With three probes passing at the highest sustained load the p99 lag has a t interval of
// their mean: missed when all of it lies above RTT + 1 s, met when all of it lies under.
func TestLagGoalOnRepeatedProbes(t *testing.T) {
	for _, tc := range []struct {
		p99  [3]float64
		want tunnel.Verdict
	}{
		{[3]float64{1.549, 1.50, 1.58}, tunnel.Missed},
		{[3]float64{0.55, 0.65, 0.60}, tunnel.Met},
		{[3]float64{0.55, 1.65, 1.10}, tunnel.NotShown},
	} {
		pts := loadQuick(t)
		var at result.Point
		for i := range pts {
			if p := &pts[i]; p.Series == MaxLoad && p.Channel == string(Tunnel) && p.Replication.TargetQPS == 1710 {
				p.Replication.LagP99S = tc.p99[0]
				at = *p
			}
		}
		for _, v := range tc.p99[1:] {
			p := at
			rs := *at.Replication
			rs.LagP99S = v
			p.Replication = &rs
			pts = append(pts, p)
		}
		j := Goals(pts)[2]
		if c := j.Cases[0]; j.Verdict != tc.want || !c.Bounded || c.N != 3 || c.Basis != "3 probes there: t interval of their mean p99" {
			t.Errorf("p99 %v: %+v, want %s", tc.p99, j, tc.want)
		}
	}
}

// The wire goal is judged at every load from the per-second bytes per query: a tunnel at
// about a quarter of native's bytes meets ≤ 0.30× at each.
func TestWireGoalFromSeries(t *testing.T) {
	point := func(ch string, bytesPerQuery float64) result.Point {
		p := result.Point{Series: Bandwidth, Channel: ch, QPS: 1200, WireBytesPerSDown: 1200 * bytesPerQuery,
			Replication: &result.ReplicationStats{TargetQPS: 1200, RTTMs: 250, LoadS: 20, Bounded: true, ChecksumOK: true}}
		for s := 1; s <= 20; s++ {
			q := 1200 + float64(s%3*10-10)
			p.Seconds = append(p.Seconds, result.Second{T: float64(s), QPS: q, WireDownBps: q * bytesPerQuery * (1 + float64(s%4)/100)})
		}
		return p
	}
	js := Goals([]result.Point{point("native", 800), point("tunnel", 200)})
	if len(js) != 1 || js[0].Goal != "replication-wire" || js[0].Verdict != tunnel.Met || !js[0].Cases[0].Bounded || js[0].Cases[0].Hi > 0.3 {
		t.Errorf("%+v", js)
	}
}

func TestWriteGoals(t *testing.T) {
	r, err := result.ReadFile("testdata/quick-results.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteGoals(dir, "wirelab study replication --quick", r); err != nil {
		t.Fatal(err)
	}
	gf, err := tunnel.ReadGoals(filepath.Join(dir, GoalsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(gf.Goals) != 3 || gf.Goals[0].Command != "wirelab study replication --quick" || gf.Goals[0].Date != "2026-11-22 02:28 to 02:39 UTC" {
		t.Errorf("%+v", gf)
	}
	if err := gf.Check(); err != nil {
		t.Error(err)
	}
}
