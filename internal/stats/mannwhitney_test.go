package stats

import (
	"errors"
	"math"
	"testing"
)

func TestMannWhitneyAgainstR(t *testing.T) {
	// Hollander & Wolfe's permeability data, the example of R's ?wilcox.test:
	// wilcox.test(x, y, alternative = "greater") gives W = 35, p-value = 0.1272, so the
	// two-sided exact p is twice that.
	hwX := []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	hwY := []float64{1.15, 0.88, 0.90, 0.74, 1.21}
	for _, tc := range []struct {
		name  string
		x, y  []float64
		u, p  float64
		exact bool
	}{
		{"hollander-wolfe", hwX, hwY, 35, 0.2544, true},
		// wilcox.test(1:4, 5:8): W = 0, p-value = 0.02857 (2 of the 70 orderings).
		{"separated four a side", []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 0, 0.02857, true},
		{"swapped", []float64{5, 6, 7, 8}, []float64{1, 2, 3, 4}, 16, 0.02857, true},
		// wilcox.test(c(1,2,2,3), c(2,3,4,5)): ties, so the normal approximation with the
		// tie correction: W = 2.5, p-value = 0.1367.
		{"ties", []float64{1, 2, 2, 3}, []float64{2, 3, 4, 5}, 2.5, 0.1367, false},
		// Three a side cannot reach 0.05 whatever the data: the smallest p is 2/20.
		{"three a side", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 0.1, true},
		{"all equal", []float64{3, 3, 3, 3}, []float64{3, 3, 3, 3}, 8, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := MannWhitneyU(tc.x, tc.y)
			if err != nil {
				t.Fatal(err)
			}
			if r.U != tc.u || math.Abs(r.P-tc.p) > 5e-5 || r.Exact != tc.exact {
				t.Errorf("U = %g, p = %.5f, exact %v; want %g, %.4f, %v", r.U, r.P, r.Exact, tc.u, tc.p, tc.exact)
			}
		})
	}
	if _, err := MannWhitneyU(nil, []float64{1}); !errors.Is(err, ErrTooFewSamples) {
		t.Errorf("empty side: err = %v", err)
	}
}

func TestMannWhitneyLargeSamplesUseTheNormalApproximation(t *testing.T) {
	var x, y []float64
	for i := 0; i < 60; i++ {
		x, y = append(x, float64(2*i)), append(y, float64(2*i+1)) // interleaved: no difference
	}
	r, _ := MannWhitneyU(x, y)
	if r.Exact || r.P < 0.8 {
		t.Errorf("interleaved 60 a side: %+v, want a large p from the normal approximation", r)
	}
	for i := range y {
		y[i] += 1000
	}
	if r, _ := MannWhitneyU(x, y); r.P > 1e-10 {
		t.Errorf("separated 60 a side: p = %g", r.P)
	}
}

func TestUDistributionMatchesTheOrderings(t *testing.T) {
	// m = n = 4: the 70 orderings by U, as R's dwilcox(0:16, 4, 4) * choose(8, 4).
	want := []float64{1, 1, 2, 3, 5, 5, 7, 7, 8, 7, 7, 5, 5, 3, 2, 1, 1}
	d := uDistribution(4, 4)
	if d.total != 70 || len(d.count) != len(want) {
		t.Fatalf("total %g, %d values", d.total, len(d.count))
	}
	for u, c := range want {
		if d.count[u] != c {
			t.Errorf("count[%d] = %g, want %g", u, d.count[u], c)
		}
	}
}

func TestShiftCI(t *testing.T) {
	// wilcox.test(5:8, 1:4, conf.int = TRUE): qwilcox(0.025, 4, 4) = 1, so the interval
	// is the smallest and largest of the 16 differences, the estimate their median.
	s := ShiftCI([]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 0.95)
	if !s.OK || s.Est != 4 || s.Lo != 1 || s.Hi != 7 {
		t.Errorf("shift = %+v, want 4 in [1, 7]", s)
	}
	if s := ShiftCI([]float64{1, 2, 3}, []float64{4, 5, 6}, 0.95); s.OK || s.Est != 3 {
		t.Errorf("three a side: %+v, want an estimate and no interval", s)
	}
	var x, y []float64
	for i := 0; i < 60; i++ {
		x, y = append(x, float64(i)), append(y, float64(i)+10)
	}
	s = ShiftCI(x, y, 0.95)
	if !s.OK || s.Est != 10 || s.Lo >= 10 || s.Hi <= 10 {
		t.Errorf("60 a side, shift 10: %+v", s)
	}
}

func TestNormalQuantile(t *testing.T) {
	if q := normalQuantile(0.975); math.Abs(q-1.959964) > 1e-5 {
		t.Errorf("normalQuantile(0.975) = %g", q)
	}
}

func TestMedianCI(t *testing.T) {
	if _, _, ok := MedianCI([]float64{1, 2, 3, 4, 5}, 0.95); ok {
		t.Error("5 values: want no 95% interval")
	}
	// n = 6: P(X <= 0) = 1/64 <= 0.025 < P(X <= 1) = 7/64, so k = 1: the whole range.
	if lo, hi, ok := MedianCI([]float64{6, 1, 5, 2, 4, 3}, 0.95); !ok || lo != 1 || hi != 6 {
		t.Errorf("6 values: [%g, %g] %v, want [1, 6]", lo, hi, ok)
	}
	// n = 20: P(X <= 5) = 0.0207 <= 0.025 < P(X <= 6) = 0.0577, so k = 6: x(6) and x(15).
	var xs []float64
	for i := 1; i <= 20; i++ {
		xs = append(xs, float64(i))
	}
	if lo, hi, ok := MedianCI(xs, 0.95); !ok || lo != 6 || hi != 15 {
		t.Errorf("20 values: [%g, %g] %v, want [6, 15]", lo, hi, ok)
	}
}
