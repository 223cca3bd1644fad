package stats

import (
	"math"
	"sort"
)

// Histogram is a latency distribution in milliseconds on sysbench 1.0's grid: 1024
// buckets spaced evenly in log(latency) from 0.001 ms to 100 s, each named by its value
// (a bucket holds latencies within ±0.9% of it). Only non-empty buckets are kept, in
// increasing order. Histograms of several runs, or of pgbench's threads, merge by adding
// counts bucket by bucket; percentiles are then read from the merged counts, never
// averaged.
type Histogram struct {
	Buckets []Bucket `json:"buckets"`
}

// Bucket is one bucket of a Histogram: its value and how many transactions it holds.
type Bucket struct {
	Ms    float64 `json:"ms"`
	Count int64   `json:"n"`
}

// sysbench 1.0's latency histogram (sb_logger.c: OPER_LOG_GRANULARITY, _MIN_VALUE,
// _MAX_VALUE): the grid BucketOf reproduces.
const (
	gridSize  = 1024
	gridMinMs = 1e-3
	gridMaxMs = 1e5
)

var gridMult = (gridSize - 1) / (math.Log(gridMaxMs) - math.Log(gridMinMs))

// BucketOf is the value of the bucket ms falls in, as sysbench prints it (to 0.001 ms):
// latencies measured elsewhere (pgbench's log) land on the same values as sysbench's, so
// either kind merges with its own kind bucket by bucket.
func BucketOf(ms float64) float64 {
	i := 0.0
	if ms > 0 {
		i = math.Floor((math.Log(ms)-math.Log(gridMinMs))*gridMult + 0.5)
	}
	i = math.Min(math.Max(i, 0), gridSize-1)
	return math.Round(math.Exp(i/gridMult+math.Log(gridMinMs))*1000) / 1000
}

// NewHistogram builds a histogram from bucket counts in any order; equal values add up.
func NewHistogram(buckets []Bucket) Histogram {
	byMs := map[float64]int64{}
	for _, b := range buckets {
		if b.Count > 0 {
			byMs[b.Ms] += b.Count
		}
	}
	h := Histogram{Buckets: make([]Bucket, 0, len(byMs))}
	for ms, n := range byMs {
		h.Buckets = append(h.Buckets, Bucket{Ms: ms, Count: n})
	}
	sort.Slice(h.Buckets, func(i, j int) bool { return h.Buckets[i].Ms < h.Buckets[j].Ms })
	return h
}

// Merge adds histograms bucket by bucket.
func Merge(hs ...Histogram) Histogram {
	var all []Bucket
	for _, h := range hs {
		all = append(all, h.Buckets...)
	}
	return NewHistogram(all)
}

// Count is the number of latencies in the histogram.
func (h Histogram) Count() int64 {
	var n int64
	for _, b := range h.Buckets {
		n += b.Count
	}
	return n
}

// Percentile is the p-th percentile (0 < p ≤ 100) by sysbench's rule: the first bucket
// at which the running count reaches round(count × p / 100). So the 95th percentile of a
// histogram sysbench printed is the "95th percentile" of its summary. 0 when empty.
func (h Histogram) Percentile(p float64) float64 {
	want := int64(math.Floor(float64(h.Count())*p/100 + 0.5))
	var n int64
	for _, b := range h.Buckets {
		n += b.Count
		if n >= want {
			return b.Ms
		}
	}
	return 0
}

// Empty reports whether the histogram holds no latency.
func (h Histogram) Empty() bool { return h.Count() == 0 }
