package stats

import (
	"math"
	"testing"
)

func TestBucketOfIsSysbenchsGrid(t *testing.T) {
	for _, ms := range []float64{0.0005, 0.001, 0.8, 3.67, 80.62, 1e5, 1e7} {
		b := BucketOf(ms)
		if BucketOf(b) != b {
			t.Errorf("BucketOf(%g) = %g, which falls in another bucket (%g)", ms, b, BucketOf(b))
		}
		if ms >= 0.001 && ms <= 1e5 && math.Abs(b-ms)/ms > 0.0092 {
			t.Errorf("BucketOf(%g) = %g: more than half a bucket away", ms, b)
		}
	}
	if BucketOf(0) != 0.001 || BucketOf(1e9) != 1e5 {
		t.Errorf("out of range: %g, %g; want the grid's ends", BucketOf(0), BucketOf(1e9))
	}
}

func TestHistogramPercentileAndMerge(t *testing.T) {
	a := NewHistogram([]Bucket{{Ms: 2, Count: 5}, {Ms: 1, Count: 90}, {Ms: 9, Count: 5}})
	if a.Count() != 100 || a.Buckets[0].Ms != 1 {
		t.Fatalf("NewHistogram: %+v", a)
	}
	// sysbench's rule: the bucket where the running count reaches round(n × p / 100).
	for _, tc := range []struct{ p, want float64 }{{50, 1}, {90, 1}, {91, 2}, {95, 2}, {96, 9}, {100, 9}} {
		if got := a.Percentile(tc.p); got != tc.want {
			t.Errorf("p%g = %g, want %g", tc.p, got, tc.want)
		}
	}
	m := Merge(a, NewHistogram([]Bucket{{Ms: 9, Count: 100}}))
	if m.Count() != 200 || len(m.Buckets) != 3 || m.Percentile(45) != 1 || m.Percentile(47.5) != 2 || m.Percentile(50) != 9 {
		t.Errorf("merged: %+v", m)
	}
	if (Histogram{}).Percentile(99) != 0 || !(Histogram{}).Empty() {
		t.Error("empty histogram")
	}
}
