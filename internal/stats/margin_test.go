package stats

import (
	"errors"
	"math"
	"testing"
)

// The chi-square quantiles of the tables (R's qchisq, 4 decimals).
func TestChi2Quantile(t *testing.T) {
	for _, c := range []struct {
		p    float64
		df   int
		want float64
	}{
		{0.975, 1, 5.0239}, {0.025, 1, 0.000982}, {0.975, 2, 7.3778}, {0.025, 2, 0.0506},
		{0.975, 5, 12.8325}, {0.025, 5, 0.8312}, {0.975, 10, 20.4832}, {0.025, 10, 3.2470},
		{0.975, 30, 46.9792}, {0.025, 30, 16.7908},
	} {
		if got := chi2Quantile(c.p, c.df); math.Abs(got-c.want) > 5e-5*max(1, c.want) && math.Abs(got-c.want) > 5e-7 {
			t.Errorf("chi2Quantile(%v, %d) = %.6f, want %v", c.p, c.df, got, c.want)
		}
	}
}

// Two settings, four runs each, every run 2% above or below its setting's geometric mean
// in log TPS: the pooled spread is the same whatever the level, the margin 1.96·√2 of it,
// and its interval holds it.
func TestMeasureMargin(t *testing.T) {
	d := 0.02
	at := func(level float64) []float64 {
		return []float64{level * math.Exp(d), level * math.Exp(-d), level * math.Exp(d), level * math.Exp(-d)}
	}
	s, err := MeasureMargin([][]float64{at(1200), at(85)})
	if err != nil {
		t.Fatal(err)
	}
	// Each group: 4 deviations of ±0.02 over 3 degrees of freedom.
	sd := math.Sqrt(8 * d * d / 6)
	if s.DF != 6 || math.Abs(s.SDLog-sd) > 1e-12 || len(s.GroupSDLog) != 2 || math.Abs(s.GroupSDLog[1]-sd) > 1e-12 {
		t.Errorf("spread %+v, want sd %.5f on 6 degrees of freedom", s, sd)
	}
	if want := math.Expm1(1.959963984540054 * math.Sqrt2 * sd); math.Abs(float64(s.Margin)-want) > 1e-12 {
		t.Errorf("margin %.5f, want %.5f", float64(s.Margin), want)
	}
	// sd·√(6/14.4494) and sd·√(6/1.2373): the chi-square interval on 6 degrees of freedom.
	lo, hi := math.Expm1(1.96*math.Sqrt2*sd*math.Sqrt(6/14.4494)), math.Expm1(1.96*math.Sqrt2*sd*math.Sqrt(6/1.2373))
	if math.Abs(float64(s.Lo)-lo) > 1e-4 || math.Abs(float64(s.Hi)-hi) > 1e-4 || s.Lo >= s.Margin || s.Hi <= s.Margin {
		t.Errorf("interval %.4f–%.4f, want %.4f–%.4f around %.4f", float64(s.Lo), float64(s.Hi), lo, hi, float64(s.Margin))
	}
	if _, err := MeasureMargin([][]float64{{100, 101}, {50}}); !errors.Is(err, ErrTooFewRuns) {
		t.Errorf("a setting with one run: %v", err)
	}
	if _, err := MeasureMargin([][]float64{{100, 101}}); !errors.Is(err, ErrTooFewRuns) {
		t.Errorf("one degree of freedom: %v", err)
	}
	if _, err := MeasureMargin([][]float64{{100, 0, 101}}); err == nil {
		t.Error("a run of 0 TPS gave a spread")
	}
}
