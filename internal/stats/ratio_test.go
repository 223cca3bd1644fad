package stats

import (
	"math"
	"testing"
)

func TestMeanOfAgreesWithCI95(t *testing.T) {
	xs := []float64{205.8, 210, 214.2}
	e := MeanOf(xs)
	m, h := CI95(xs)
	if e.Mean != m || e.Half95() != h || e.DF != 2 {
		t.Errorf("MeanOf = %+v (half %v), CI95 = %v ± %v", e, e.Half95(), m, h)
	}
	if one := MeanOf([]float64{7}); one.Known() || one.Half95() != 0 || one.Mean != 7 {
		t.Errorf("one value: %+v", one)
	}
}

func TestSeriesMeanBatches(t *testing.T) {
	if e := SeriesMean([]float64{1, 2, 3}, 1); e.Known() {
		t.Errorf("3 seconds gave a spread: %+v", e)
	}
	// 25 seconds: batches of 2, 12 of them (the first second is left out of the SE).
	xs := make([]float64, 25)
	for i := range xs {
		xs[i] = 100 + float64(i%3)
	}
	if e := SeriesMean(xs, 1); e.DF != 11 || e.SE <= 0 {
		t.Errorf("25 seconds: %+v, want DF 11 and a spread", e)
	}
	// 300 seconds: ten batches of 30.
	ys := make([]float64, 300)
	for i := range ys {
		ys[i] = float64(i % 7)
	}
	if e := SeriesMean(ys, 1); e.DF != 9 {
		t.Errorf("300 seconds: DF %d, want 9", e.DF)
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
	// Four flat seconds each (a --quick point) of 56 and 55 TPS: one transaction a second
	// apart is within what four readings can resolve, so the ratio's interval includes 1.
	four := func(v float64) Estimate { return SeriesMean([]float64{v, v, v, v}, 1) }
	if r := Ratio95(four(55), four(56)); !r.Crosses1() {
		t.Errorf("55 vs 56 TPS over four flat seconds: %+v, want an interval that includes 1", r)
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

// Throughputs cannot be negative: an uncertain numerator's interval starts at 0, not below.
func TestRatio95LowerBoundIsCutAtZero(t *testing.T) {
	r := Ratio95(Estimate{Mean: 220, SE: 200, DF: 3}, Estimate{Mean: 56, SE: 1, DF: 3})
	if !r.Known || r.Lo != 0 || r.Hi <= r.Ratio {
		t.Errorf("ratio %+v: want [0, hi] around %.2f", r, 220.0/56)
	}
}

func TestRatio95Fieller(t *testing.T) {
	num, den := Estimate{Mean: 110, SE: 2, DF: 9}, Estimate{Mean: 100, SE: 2, DF: 9}
	r := Ratio95(num, den)
	if !r.Known || math.Abs(r.Ratio-1.1) > 1e-12 || r.Crosses1() {
		t.Fatalf("ratio %+v", r)
	}
	// The bounds solve Fieller's equation (b − θa)² = t²(vb + θ²va).
	tq := t975(9)
	for _, th := range []float64{r.Lo, r.Hi} {
		lhs, rhs := sqr(110-th*100), tq*tq*(4+th*th*4)
		if math.Abs(lhs-rhs) > 1e-6*rhs {
			t.Errorf("θ = %v: %v ≠ %v", th, lhs, rhs)
		}
	}
	// Small errors: close to the delta method, and wider above the ratio than below.
	d := tq * 1.1 * math.Sqrt(sqr(2.0/100)+sqr(2.0/110))
	if math.Abs(r.Lo-(1.1-d)) > 0.005 || math.Abs(r.Hi-(1.1+d)) > 0.005 || r.Hi-1.1 <= 1.1-r.Lo {
		t.Errorf("Fieller [%v, %v], delta 1.1 ± %v", r.Lo, r.Hi, d)
	}
}

func TestRatio95Edges(t *testing.T) {
	if r := Ratio95(Estimate{Mean: 102, SE: 2, DF: 4}, Estimate{Mean: 100, SE: 2, DF: 4}); !r.Crosses1() {
		t.Errorf("102 vs 100 with SE 2 does not cross 1: %+v", r)
	}
	if r := Ratio95(Estimate{Mean: 50}, Estimate{Mean: 100}); r.Known || r.Lo != 0.5 || r.Hi != 0.5 || r.Crosses1() {
		t.Errorf("no spread: %+v", r)
	}
	// A denominator indistinguishable from zero: the interval does not close.
	if r := Ratio95(Estimate{Mean: 50, SE: 1, DF: 2}, Estimate{Mean: 1, SE: 1, DF: 2}); !math.IsInf(r.Lo, -1) || !math.IsInf(r.Hi, 1) || !r.Crosses1() {
		t.Errorf("unbounded: %+v", r)
	}
	// One side known, the other exact: the interval comes from the known side alone.
	r := Ratio95(Estimate{Mean: 110, SE: 2, DF: 9}, Estimate{Mean: 100})
	if h := t975(9) * 2 / 100; math.Abs(r.Lo-(1.1-h)) > 1e-9 || math.Abs(r.Hi-(1.1+h)) > 1e-9 {
		t.Errorf("exact denominator: %+v", r)
	}
}
