package result

import (
	"math"
	"testing"
)

// syncPoint is a usable sync point of mode at rtt ms and threads.
func syncPoint(mode string, rtt float64, threads int, p50, tps float64) Point {
	return Point{Study: "sync", Series: mode, Threads: threads, TPS: tps, LatP50Ms: p50,
		Sync: &SyncStats{Mode: mode, Control: mode == "async", RTTMs: rtt, CommitP50Ms: p50, ChecksumOK: true}}
}

func syncPoints() []Point {
	var pts []Point
	for _, r := range []float64{0, 20, 100} {
		pts = append(pts,
			syncPoint("async", r, 1, 0.5, 2000), syncPoint("async", r, 8, 0.9, 8000),
			syncPoint("semisync-after-sync", r, 1, 1.02*r+1.4, 1000/(1.02*r+1.4)),
			syncPoint("semisync-after-sync", r, 8, 1.02*r+2, 8000/(1.02*r+2)))
	}
	return pts
}

func TestCommitFits(t *testing.T) {
	pts := syncPoints()
	// A fallen-back point and a failed one must not bend the line.
	fell := syncPoint("semisync-after-sync", 50, 1, 0.6, 1500)
	fell.Sync.FellBack = true
	failed := syncPoint("semisync-after-sync", 70, 1, 5, 10)
	failed.Failed = true
	fits := CommitFits(append(pts, fell, failed))
	if len(fits) != 2 {
		t.Fatalf("fits %+v, want async and semisync-after-sync", fits)
	}
	a, s := fits[0], fits[1]
	if a.Mode != "async" || math.Abs(a.RTTs) > 1e-9 || math.Abs(a.ConstMs-0.5) > 1e-9 {
		t.Errorf("async fit %+v, want 0 RTT + 0.5 ms", a)
	}
	if s.Mode != "semisync-after-sync" || s.Threads != 1 || s.Points != 3 || math.Abs(s.RTTs-1.02) > 1e-9 || math.Abs(s.ConstMs-1.4) > 1e-9 {
		t.Errorf("semi-sync fit %+v, want 1.02 RTT + 1.4 ms over 3 RTTs at 1 thread", s)
	}
	if got := s.At(50); math.Abs(got-52.4) > 1e-9 {
		t.Errorf("At(50) = %g, want 52.4", got)
	}
}

func TestBelowTarget(t *testing.T) {
	bs := BelowTarget(syncPoints(), 8, 1000)
	if len(bs) != 2 {
		t.Fatalf("BelowTarget = %+v", bs)
	}
	if bs[0].Mode != "async" || bs[0].Found || bs[0].AtRTTMs != 100 {
		t.Errorf("async %+v: want never below, up to 100 ms", bs[0])
	}
	// 8000/(1.02·20+2) = 357 TPS at 20 ms: below 1000; at 0 ms 4000.
	if bs[1].Mode != "semisync-after-sync" || !bs[1].Found || bs[1].RTTMs != 20 {
		t.Errorf("semi-sync %+v: want below at 20 ms", bs[1])
	}
	if tps, ok := SyncTPS(syncPoints(), "async", 20, 8); !ok || tps != 8000 {
		t.Errorf("SyncTPS = %g, %v", tps, ok)
	}
	if _, ok := SyncTPS(syncPoints(), "async", 7, 8); ok {
		t.Error("SyncTPS at an RTT not measured: want ok false")
	}
}
