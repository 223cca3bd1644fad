package result

import (
	"math"

	"github.com/wirelab/wirelab/internal/stats"
)

// Latency is a point's latency distribution in milliseconds, as read from a histogram.
type Latency struct {
	P50Ms, P95Ms, P99Ms float64
	MaxMs               float64
	Count               int64 // transactions in the histogram
}

// LatencyOf reads the percentiles of h; maxMs is the exact maximum where the driver
// reports one (the histogram's top bucket is within 0.9% of it), else 0 to take that
// bucket. It is the one place a point's latency percentiles are computed.
func LatencyOf(h stats.Histogram, maxMs float64) Latency {
	l := Latency{P50Ms: h.Percentile(50), P95Ms: h.Percentile(95), P99Ms: h.Percentile(99),
		MaxMs: maxMs, Count: h.Count()}
	if l.MaxMs == 0 && len(h.Buckets) > 0 {
		l.MaxMs = h.Buckets[len(h.Buckets)-1].Ms
	}
	return l
}

// SetLatency stores the driver's histogram of the measured seconds in the point with its
// percentiles; an empty histogram (nothing completed) leaves the point as it was.
func (p *Point) SetLatency(h stats.Histogram, maxMs float64) {
	if h.Empty() {
		return
	}
	l := LatencyOf(h, maxMs)
	p.LatHistogram = &h
	p.LatP50Ms, p.LatP95Ms, p.LatP99Ms, p.LatMaxMs = l.P50Ms, l.P95Ms, l.P99Ms, l.MaxMs
}

// MergedLatency is the latency of points taken together (a cell's repeats): their
// histograms merged, the percentiles read from the merge, the largest maximum. ok is false
// when a point has no histogram: averaging percentiles instead would not be the same
// figure.
func MergedLatency(pts []Point) (Latency, bool) {
	var hs []stats.Histogram
	var maxMs float64
	for _, p := range pts {
		if p.LatHistogram == nil {
			return Latency{}, false
		}
		hs = append(hs, *p.LatHistogram)
		maxMs = math.Max(maxMs, p.LatMaxMs)
	}
	if len(hs) == 0 {
		return Latency{}, false
	}
	return LatencyOf(stats.Merge(hs...), maxMs), true
}
