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
	if e := SeriesMean([]float64{1, 2, 3}); e.Known() {
		t.Errorf("3 seconds gave a spread: %+v", e)
	}
	// 25 steady seconds: batches of 2, 12 of them (the first second is left out of the SE).
	xs := make([]float64, 25)
	for i := range xs {
		xs[i] = 100
	}
	if e := SeriesMean(xs); e.DF != 11 || e.SE != 0 || e.Mean != 100 {
		t.Errorf("25 constant seconds: %+v, want DF 11, SE 0", e)
	}
	// 300 seconds: ten batches of 30.
	if e := SeriesMean(make([]float64, 300)); e.DF != 9 {
		t.Errorf("300 seconds: DF %d, want 9", e.DF)
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
	e := SeriesMean(xs)
	if e.SE < 3*naive {
		t.Errorf("batch-means SE %.3f, naive %.3f: the correlation was missed", e.SE, naive)
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
