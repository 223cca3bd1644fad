package stats

import (
	"math"
	"testing"
)

func TestBatchMeans(t *testing.T) {
	seq := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i + 1)
		}
		return xs
	}
	for _, tc := range []struct {
		n, k, b int
		first   float64 // the first batch's mean
	}{
		{60, 10, 6, 3.5},   // seconds 1-6
		{25, 12, 2, 2.5},   // second 1 left over: 2-3
		{5, 2, 2, 2.5},     // a 5 s point: 2 batches
		{1, 0, 2, 0},       // one second: no batch
		{131, 10, 13, 8.0}, // seconds 2-14
	} {
		m, b := BatchMeans(seq(tc.n))
		if len(m) != tc.k || b != tc.b || (tc.k > 0 && m[0] != tc.first) {
			t.Errorf("n=%d: %d batches of %d, first %v; want %d of %d, first %v", tc.n, len(m), b, m, tc.k, tc.b, tc.first)
		}
	}
}

// SeriesMean's spread is that of the same batch means.
func TestSeriesMeanUsesBatchMeans(t *testing.T) {
	xs := []float64{10, 12, 11, 13, 9, 10, 14, 12, 11, 10, 12, 13, 9, 11, 12, 10, 11, 13, 12, 10}
	m, _ := BatchMeans(xs)
	e := SeriesMean(xs, 0)
	if want := stddev(m) / math.Sqrt(float64(len(m))); e.N != len(m) || math.Abs(e.SE-want) > 1e-12 {
		t.Errorf("SeriesMean N=%d SE=%g, want %d and %g", e.N, e.SE, len(m), want)
	}
}
