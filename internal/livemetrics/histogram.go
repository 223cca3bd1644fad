package livemetrics

import (
	"sort"

	"github.com/wirelab/wirelab/internal/stats"
)

// latencyBounds are the upper bounds, in seconds, of the served latency histogram's
// buckets: a LAN's sub-millisecond queries to a WAN's seconds.
var latencyBounds = [...]float64{0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10}

// histogram is a point's latencies on latencyBounds: counts per bucket (not cumulative;
// the last one above every bound), their number and their sum in seconds.
type histogram struct {
	counts [len(latencyBounds) + 1]uint64
	n      uint64
	sum    float64
}

// add adds h: each of its buckets (sysbench's grid, a value within 1% of its
// transactions') goes to the first bound at or above its value.
func (x *histogram) add(h stats.Histogram) {
	for _, b := range h.Buckets {
		if b.Count <= 0 {
			continue
		}
		s := b.Ms / 1000
		i := sort.SearchFloat64s(latencyBounds[:], s)
		x.counts[i] += uint64(b.Count)
		x.n += uint64(b.Count)
		x.sum += s * float64(b.Count)
	}
}

// cumulative is the histogram as Prometheus serves it: per bound, the count at or below.
func (x *histogram) cumulative() map[float64]uint64 {
	out := make(map[float64]uint64, len(latencyBounds))
	var c uint64
	for i, b := range latencyBounds {
		c += x.counts[i]
		out[b] = c
	}
	return out
}
