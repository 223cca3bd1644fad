package replication

import (
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
	"github.com/wirelab/wirelab/internal/sysbench"
)

func TestFillSeriesCoversCatchUpAveragesOnlyLoad(t *testing.T) {
	ivs := []sysbench.Interval{{T: 1, TPS: 50, QPS: 300}, {T: 2, TPS: 50, QPS: 300}, {T: 3, TPS: 50, QPS: 300}}
	var ws []metrics.Sample
	for i := 1; i <= 5; i++ {
		down := 100_000.0
		if i > 3 {
			down = 250_000 // catch-up at line rate: not part of the load's average
		}
		ws = append(ws, metrics.Sample{T: time.Duration(i) * time.Second, DownBytesPerS: down, UpBytesPerS: 1000})
	}
	lags := []LagSample{{At: 500 * time.Millisecond, Lag: 200 * time.Millisecond}, {At: 2500 * time.Millisecond, Lag: time.Second},
		{At: 4200 * time.Millisecond, Lag: 300 * time.Millisecond}}
	p := result.Point{LinkRateBps: 2_000_000}
	fill(&p, study.NewSysbench(ivs, nil), ws, lags, 3*time.Second, 2*time.Second)
	if len(p.Seconds) != 5 {
		t.Fatalf("%d seconds, want 5 (3 of load + 2 of catch-up)", len(p.Seconds))
	}
	if p.QPS != 300 || p.WireBytesPerSDown != 100_000 || p.WireBytesPerSUp != 1000 {
		t.Fatalf("qps %v down %v up %v: want 300, 100000, 1000 (load window only)", p.QPS, p.WireBytesPerSDown, p.WireBytesPerSUp)
	}
	if p.LinkUtilization != 0.4 {
		t.Fatalf("utilization %v, want 0.4", p.LinkUtilization)
	}
	wantLag := []float64{0.2, 0.2, 1, 1, 0.3} // a second with no reading carries the last one
	for i, w := range wantLag {
		if p.Seconds[i].Lag != w {
			t.Fatalf("lag series %v, want %v", p.Seconds, wantLag)
		}
	}
}
