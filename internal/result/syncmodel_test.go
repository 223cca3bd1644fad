package result

import (
	"math"
	"slices"
	"testing"
)

// modelPoints are a sweep over RTTs 0, 20 and 100 ms at 1 and 8 threads of three modes
// made from known bounds: "window" commits in 1·RTT + 0.5 ms and shares each round trip
// among 4 commits on top of 0.4 ms of its own (TPS ≤ 1000 ÷ (0.4 + RTT/4)); "closed"
// commits the same way with a 3000 TPS ceiling and no window; "async" commits in 0.5 ms
// whatever the RTT and is held at 5000 TPS.
func modelPoints() []Point {
	var pts []Point
	for _, r := range []float64{0, 20, 100} {
		for _, th := range []int{1, 8} {
			n := float64(th)
			commit := r + 0.5
			pts = append(pts,
				syncPoint("window", r, th, commit, math.Min(n*1000/commit, 1000/(0.4+r/4))),
				syncPoint("closed", r, th, commit, math.Min(n*1000/commit, 3000)),
				syncPoint("async", r, th, 0.5, math.Min(n*1000/0.5, 5000)))
		}
	}
	return pts
}

func TestSyncModels(t *testing.T) {
	ms := SyncModels(modelPoints())
	if len(ms) != 3 {
		t.Fatalf("%d models, want 3", len(ms))
	}
	w, c, a := ms[0], ms[1], ms[2]
	if w.Commit.Mode != "window" || math.Abs(w.Window-4) > 1e-9 || math.Abs(w.CeilMs-0.4) > 1e-9 || !slices.Equal(w.CeilRTTs, []float64{0, 20, 100}) {
		t.Errorf("window mode %+v: want 4 commits per round trip on 0.4 ms, read at every RTT", w)
	}
	// At 20 and 100 ms its 8 threads all waited for their commits: only RTT 0 shows the
	// ceiling, which therefore has no window.
	if c.Commit.Mode != "closed" || c.Window != 0 || !slices.Equal(c.CeilRTTs, []float64{0}) || math.Abs(c.CeilMs-1000.0/3000) > 1e-9 {
		t.Errorf("closed mode %+v: want a 3000 TPS ceiling read at RTT 0 only, no window", c)
	}
	if a.Commit.Mode != "async" || a.Window != 0 || len(a.CeilRTTs) != 3 || math.Abs(a.CeilMs-0.2) > 1e-9 {
		t.Errorf("async %+v: want a 5000 TPS ceiling at every RTT, no window", a)
	}
	if !slices.Equal(w.RTTs, []float64{0, 20, 100}) || !slices.Equal(w.Threads, []int{1, 8}) {
		t.Errorf("measured RTTs %v threads %v", w.RTTs, w.Threads)
	}
	cases := []struct {
		m       SyncModel
		threads int
		rtt     float64
		tps     float64
		bound   string
	}{
		{w, 8, 50, 1000 / (0.4 + 50.0/4), BoundCeiling},
		{w, 1, 50, 1000 / 50.5, BoundClosedLoop},
		{c, 8, 50, 8000 / 50.5, BoundClosedLoop},
		{c, 64, 10, 3000, BoundCeiling},
		{a, 8, 300, 5000, BoundCeiling},
		{a, 1, 300, 2000, BoundClosedLoop},
	}
	for _, k := range cases {
		tps, bound := k.m.TPS(k.threads, k.rtt)
		if math.Abs(tps-k.tps) > 1e-6*k.tps || bound != k.bound {
			t.Errorf("%s at %d threads, %g ms: %g TPS (%s), want %g (%s)", k.m.Commit.Mode, k.threads, k.rtt, tps, bound, k.tps, k.bound)
		}
	}
	for _, k := range []struct {
		threads     int
		rtt         float64
		byTh, byRTT bool
	}{{8, 20, false, false}, {1, 100, false, false}, {64, 50, true, false}, {8, 150, false, true}, {2048, 0.15, true, false}} {
		if th, r := w.Extrapolates(k.threads, k.rtt); th != k.byTh || r != k.byRTT {
			t.Errorf("Extrapolates(%d, %g) = %v, %v; want %v, %v", k.threads, k.rtt, th, r, k.byTh, k.byRTT)
		}
	}
}

// A ceiling whose time per commit does not rise with the round trip is no window: the
// mean of its points holds at every RTT.
func TestSyncModelCeilingThatDoesNotFall(t *testing.T) {
	var pts []Point
	for i, r := range []float64{20, 100} {
		// 8 threads: 50 TPS (20 ms a commit) at 20 ms, 60 (16.7 ms) at 100 ms.
		pts = append(pts, syncPoint("m", r, 1, r+0.5, 1000/(r+0.5)), syncPoint("m", r, 8, r+0.5, []float64{50, 60}[i]))
	}
	m := SyncModels(pts)[0]
	if m.Window != 0 || len(m.CeilRTTs) != 2 || math.Abs(m.CeilMs-(20+1000.0/60)/2) > 1e-9 {
		t.Errorf("falling time per commit: %+v, want no window and the mean of 20 and %.3f ms", m, 1000.0/60)
	}
	if tps, b := m.TPS(8, 60); b != BoundCeiling || math.Abs(tps-1000/m.CeilMs) > 1e-9 {
		t.Errorf("TPS(8, 60) = %g %s, want the constant ceiling", tps, b)
	}
}
