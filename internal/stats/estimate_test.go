package stats

import (
	"math"
	"testing"
)

func TestMeanOfAgreesWithCI95(t *testing.T) {
	xs := []float64{205.8, 210, 214.2}
	e := MeanOf(xs)
	m, h := CI95(xs)
	if e.Mean != m || e.Half95() != h || e.DF != 2 || e.N != 3 || e.Of != Repeats || e.Lo != 205.8 || e.Hi != 214.2 {
		t.Errorf("MeanOf = %+v (half %v), CI95 = %v ± %v", e, e.Half95(), m, h)
	}
	if one := MeanOf([]float64{7}); one.Known() || one.Half95() != 0 || one.Mean != 7 || one.N != 1 {
		t.Errorf("one value: %+v", one)
	}
}

func TestSeriesMeanBatches(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		wantN  int
		wantDF int
	}{
		{"3 seconds: one batch", 3, 1, 0},
		// A 5 s point: two batches of 2 s, one degree of freedom; no interval.
		{"5 seconds: two batches, too few", 5, 2, 0},
		{"6 seconds: three batches", 6, 3, 2},
		// Batches of 2, 12 of them (the first second is left out of the SE).
		{"25 seconds", 25, 12, 11},
		{"300 seconds: ten batches of 30", 300, 10, 9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			xs := make([]float64, tc.n)
			for i := range xs {
				xs[i] = 100 + float64(i%3)
			}
			e := SeriesMean(xs, 1)
			if e.N != tc.wantN || e.DF != tc.wantDF || e.Of != Seconds || e.Known() != (tc.wantDF > 0) {
				t.Errorf("%+v, want N %d and DF %d", e, tc.wantN, tc.wantDF)
			}
			if e.Lo != 100 || e.Hi != min(102, 100+float64(tc.n-1)) {
				t.Errorf("range %v–%v", e.Lo, e.Hi)
			}
		})
	}
	// A full link reports the same count every second: the spread is the counts'
	// resolution (±0.5 transaction a reading), not zero.
	flat := make([]float64, 24)
	for i := range flat {
		flat[i] = 56
	}
	e := SeriesMean(flat, 1)
	if want := 1 / math.Sqrt(12*24); e.DF != 11 || math.Abs(e.SE-want) > 1e-12 {
		t.Errorf("24 identical seconds: %+v, want DF 11 and SE %.4f (the resolution)", e, want)
	}
}

// A series that stays high for 10 s then low for 10 s has correlated neighbours: batch
// means see a spread about three times the s/√n of the raw seconds.
func TestSeriesMeanSeesAutocorrelation(t *testing.T) {
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = 100 + 10*float64(1-2*((i/10)%2))
	}
	naive := stddev(xs) / math.Sqrt(float64(len(xs)))
	e := SeriesMean(xs, 1)
	if e.SE < 3*naive {
		t.Errorf("batch-means SE %.3f, naive %.3f: the correlation was missed", e.SE, naive)
	}
}

// Bytes per query from seconds whose query counts swing: each batch's Σx ÷ Σy, so a
// constant bytes-per-query reads as that constant with no spread, and a second of no
// queries inside a batch does not divide by zero.
func TestSeriesRatio(t *testing.T) {
	var xs, ys []float64
	for i := range 20 {
		q := 40 + 20*float64(i%2)
		if i == 7 {
			q = 0
		}
		xs, ys = append(xs, 500*q), append(ys, q)
	}
	e := SeriesRatio(xs, ys, 1, 1)
	// Constant bytes per query: no spread beyond the readings' own steps of 1 byte and 1
	// query, over the sums of the 20 seconds the batches use.
	floor := 500 * math.Sqrt(20.0/12*(sqr(1/(500*sum(ys)))+sqr(1/sum(ys))))
	if e.Mean != 500 || math.Abs(e.SE-floor) > 1e-12 || e.SE <= 0 || e.DF != 9 || e.N != 10 || e.Lo != 500 || e.Hi != 500 {
		t.Errorf("constant 500 B a query: %+v, want the resolution floor %v", e, floor)
	}
	// Two halves at different bytes per query: the batches see it. Lo and Hi are single
	// seconds' ratios: one second sent 800 B a query (60 queries), its batch with the 40
	// queries at 500 B before it 680.
	xs[3] = 800 * ys[3]
	for i := 10; i < 20; i++ {
		xs[i] = 700 * ys[i]
	}
	if e := SeriesRatio(xs, ys, 1, 1); e.SE <= 0 || e.Lo != 500 || e.Hi != 800 || math.Abs(e.Mean-(500*sum(ys[:10])+700*sum(ys[10:])+300*ys[3])/sum(ys)) > 1e-9 {
		t.Errorf("500 then 700 B a query: %+v", e)
	}
	if e := SeriesRatio([]float64{1, 2, 3, 4}, []float64{1, 1, 1, 1}, 1, 1); e.Known() || e.Mean != 2.5 || e.Lo != 1 || e.Hi != 4 {
		t.Errorf("4 seconds: %+v, want a mean without a spread, the seconds 1-4", e)
	}
	if e := SeriesRatio(xs, make([]float64, len(xs)), 1, 1); e.Known() || e.Mean != 0 {
		t.Errorf("no queries: %+v", e)
	}
}

func sum(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}
