package report

import (
	"fmt"

	"github.com/wirelab/wirelab/internal/result"
)

// latencyHeader is the latency column of points that carry the driver's histogram.
const latencyHeader = "latency ms: p50 / p95 / p99 (max)"

// withHistograms reports whether every point that completed carries a latency histogram:
// its tables then show percentiles instead of the older single figure.
func withHistograms(pts []result.Point) bool {
	n := 0
	for _, p := range pts {
		if p.Failed {
			continue
		}
		if p.LatHistogram == nil {
			return false
		}
		n++
	}
	return n > 0
}

// latencyCell is the percentiles of points taken together (a cell's repeats, from their
// merged histograms): "1.23 / 4.57 / 8.9 (max 31.2)"; a dash without histograms.
func latencyCell(pts []result.Point) string {
	l, ok := result.MergedLatency(pts)
	if !ok {
		return "–"
	}
	return fmt.Sprintf("%s / %s / %s (max %s)", num(l.P50Ms), num(l.P95Ms), num(l.P99Ms), num(l.MaxMs))
}
