package compare

import (
	"math"
	"math/rand"
	"strings"
	"testing"
)

// The estimate and its interval are one estimator (Hodges-Lehmann on the logs): the
// estimate lies inside the interval for any samples, ties included, and a called change
// has p < Alpha, an interval clear of 1 and an estimate beyond the margin.
func TestEstimateLiesInsideItsInterval(t *testing.T) {
	rng := rand.New(rand.NewSource(56))
	for i := 0; i < 2000; i++ {
		m, n := 4+rng.Intn(9), 4+rng.Intn(9)
		shift := 1 + 0.15*rng.NormFloat64()
		draw := func(k int, scale float64) []float64 {
			xs := make([]float64, k)
			for j := range xs {
				xs[j] = scale * (100 + 3*rng.NormFloat64())
				if i%3 == 0 { // a coarse grid: ties
					xs[j] = math.Round(xs[j] / 2)
				}
			}
			return xs
		}
		a, b := draw(m, 1), draw(n, shift)
		c := decide(a, b, DefaultMargin, false)
		if c.RatioCI == nil || c.Ratio < c.RatioCI.Lo || c.Ratio > c.RatioCI.Hi {
			t.Fatalf("%v vs %v: estimate %g outside %+v", a, b, c.Ratio, c.RatioCI)
		}
		if !c.Tested {
			t.Fatalf("%d+%d units: not tested", m, n)
		}
		if c.Significant && (c.P >= Alpha || c.RatioCI.Lo <= 1 && c.RatioCI.Hi >= 1 || math.Abs(c.Ratio-1) <= DefaultMargin) {
			t.Fatalf("%v vs %v: called %+v", a, b, c)
		}
	}
}

// A link-bound point repeats within a few percent: a 2% shift is significant to the test
// but within the margin, and called once the margin is 1%.
func TestChangeWithinTheMarginIsNotCalled(t *testing.T) {
	a := []float64{59.4, 59.6, 59.2, 59.5, 59.3, 59.45}
	b := []float64{58.2, 58.4, 58.1, 58.3, 58.0, 58.25}
	ch := decide(a, b, DefaultMargin, false)
	if ch.Significant || !ch.Tested || ch.P >= Alpha || !strings.Contains(ch.Reason, "margin") {
		t.Errorf("2%% shift: %+v, want p < 0.05 and \"~\" for the margin", ch)
	}
	if ch := decide(a, b, 0.01, false); !ch.Significant || ch.Verdict != "worse" {
		t.Errorf("2%% less TPS with a 1%% margin: %+v, want it called worse", ch)
	}
	if ch := decide(a, b, 0.01, true); ch.Verdict != "better" {
		t.Errorf("2%% less latency with a 1%% margin: %+v, want it called better", ch)
	}
	three := []float64{100, 101, 102}
	if ch := decide(three, []float64{200, 201, 202}, DefaultMargin, false); ch.Tested || ch.Significant || ch.Ratio < 1.9 {
		t.Errorf("3 units a side: %+v, want the estimate and no test", ch)
	}
}

// A p-value that underflows to 0 is a tested, significant change, never "not tested".
func TestPUnderflowIsNotNotTested(t *testing.T) {
	const n = 1200 // the normal approximation's tail underflows past z ≈ 38
	a, b := make([]float64, n), make([]float64, n)
	for i := range a {
		a[i], b[i] = 100+float64(i)/n, 150+float64(i)/n
	}
	ch := decide(a, b, DefaultMargin, false)
	if !ch.Tested || ch.P != 0 || !ch.Significant {
		t.Fatalf("%+v, want tested with p = 0 and called", ch)
	}
	c := &Comparison{Alpha: Alpha, Margin: DefaultMargin, MinSamples: MinSamples, Runs: []RunInfo{{Name: "a"}, {Name: "b"}}}
	u := Unit{Kind: Repeats, N: n, Points: n}
	txt := c.changeText(ch, Side{Unit: u}, Side{Unit: u}, 1)
	if !strings.HasPrefix(txt, "better +49.8%") || !strings.Contains(txt, "p<0.001, 1200+1200 repeats") {
		t.Errorf("printed %q", txt)
	}
}

func TestUnitsText(t *testing.T) {
	for _, tc := range []struct {
		a, b Unit
		want string
	}{
		{Unit{Kind: Batches, N: 10, BatchS: 6}, Unit{Kind: Batches, N: 9, BatchS: 6}, "10+9 batches of 6 s"},
		{Unit{Kind: Batches, N: 10, BatchS: 6}, Unit{Kind: Batches, N: 10, BatchS: 3}, "10 batches of 6 s + 10 of 3 s"},
		{Unit{Kind: Repeats, N: 5, Points: 5}, Unit{Kind: Repeats, N: 4, Points: 5, Failed: 1}, "5+4 repeats"},
		{Unit{Kind: Repeats, N: 1, Points: 1}, Unit{Kind: Repeats, N: 1, Points: 1}, "1 run a side"},
	} {
		if got := unitsText(tc.a, tc.b); got != tc.want {
			t.Errorf("%+v, %+v: %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}
