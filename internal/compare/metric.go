package compare

import (
	"fmt"

	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

// metric is one figure compare tests: TPS, and the latency percentiles where the points
// have them. Each gets its own table, the same units, estimator and rule.
type metric struct {
	name          string // as JSON names it: the results.json field
	title         string // as a table's caption names it
	short         string // as a reason names it
	lowerIsBetter bool
	// zeroIsMissing: 0 means "not measured" (a latency percentile), not a reading.
	zeroIsMissing bool
	ofPoint       func(result.Point) float64
	// ofSecond is the figure in one second of the per-second series; nil when the
	// series has none (only the whole run's histogram gives p50 and p99).
	ofSecond func(result.Second) float64
}

// metrics are the tables, in the order they are printed.
var metrics = []metric{
	{name: "tps", title: "TPS (more is better)", short: "TPS",
		ofPoint: func(p result.Point) float64 { return p.TPS }, ofSecond: func(s result.Second) float64 { return s.TPS }},
	{name: "lat_p50_ms", title: "latency p50, ms (less is better)", short: "p50", lowerIsBetter: true, zeroIsMissing: true,
		ofPoint: func(p result.Point) float64 { return p.LatP50Ms }},
	{name: "lat_p95_ms", title: "latency p95, ms (less is better)", short: "p95", lowerIsBetter: true, zeroIsMissing: true,
		ofPoint: func(p result.Point) float64 { return p.LatP95Ms }, ofSecond: func(s result.Second) float64 { return s.LatP95Ms }},
	{name: "lat_p99_ms", title: "latency p99, ms (less is better)", short: "p99", lowerIsBetter: true, zeroIsMissing: true,
		ofPoint: func(p result.Point) float64 { return p.LatP99Ms }},
}

// values are g's samples of m in unit u: one per repeat, or one run's batch means of the
// metric's per-second series. missing says why there are none. Every value is positive,
// as the ratios on the log scale need.
func (m metric) values(g *group, u Unit) (xs []float64, missing string) {
	if len(g.ok) == 0 {
		return nil, "every repeat failed"
	}
	if u.Kind == Repeats {
		for _, p := range g.ok {
			if v := m.ofPoint(p); v > 0 {
				xs = append(xs, v)
				continue
			}
			if m.zeroIsMissing {
				return nil, fmt.Sprintf("%s has no %s (not measured)", u, m.short)
			}
			return nil, fmt.Sprintf("a run with %s 0 has no ratio", m.short)
		}
		return xs, ""
	}
	if m.ofSecond == nil {
		return nil, fmt.Sprintf("a run's seconds carry no %s: run both with --repeat", m.short)
	}
	var secs []float64
	for _, s := range g.ok[0].MeasuredSeconds() {
		v := m.ofSecond(s)
		if v <= 0 && m.zeroIsMissing {
			return nil, fmt.Sprintf("a measured second has no %s (none completed, or a driver that reports none)", m.short)
		}
		secs = append(secs, v)
	}
	xs, _ = stats.BatchMeans(secs)
	for _, x := range xs {
		if x <= 0 {
			return nil, fmt.Sprintf("a batch with %s 0 has no ratio", m.short)
		}
	}
	return xs, ""
}
