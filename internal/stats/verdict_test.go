package stats

import (
	"math"
	"testing"
)

func series(vals ...float64) Estimate { return SeriesMean(vals, 1) }

// repeat returns n seconds cycling through vals.
func repeat(n int, vals ...float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = vals[i%len(vals)]
	}
	return xs
}

// The quick report's case: 5 s points, two batches a side. Every compressed second is
// below every plain one, yet no interval may be claimed.
func TestCompareFiveSecondPointsAreTooShort(t *testing.T) {
	plain := series(966, 1500, 2049, 1800, 1845)
	comp := series(435, 654, 500, 480, 464)
	c := Compare(plain, comp, DefaultMargin)
	if c.Verdict != TooShort || c.Why != FewSamples || c.Bounded {
		t.Errorf("%+v, want TooShort for few samples and no interval", c)
	}
	if c.A.N != 2 || c.B.N != 2 {
		t.Errorf("batches %d and %d, want 2 and 2", c.A.N, c.B.N)
	}
	if c.Seen() != AllBelow {
		t.Errorf("seen %v, want every compressed second below every plain one", c.Seen())
	}
	if math.Abs(c.Ratio-comp.Mean/plain.Mean) > 1e-12 {
		t.Errorf("ratio %v", c.Ratio)
	}
}

func TestCompareVerdicts(t *testing.T) {
	tests := []struct {
		name string
		a, b Estimate
		want Verdict
		why  Undecided
	}{
		// Flat on a full link, one transaction a second apart: within what the lab
		// repeats, measured well enough to say so.
		{"same within the margin", series(repeat(24, 56)...), series(repeat(24, 55)...), NoDifference, Decided},
		{"higher", series(repeat(20, 99, 101)...), series(repeat(20, 119, 121)...), Higher, Decided},
		{"lower", series(repeat(20, 99, 101)...), series(repeat(20, 30, 31)...), Lower, Decided},
		{"wide", series(repeat(20, 60, 60, 140, 140)...), series(repeat(20, 62, 62, 142, 142)...), TooShort, Wide},
		{"one side without a spread is not exact", Single(100), series(repeat(20, 119, 121)...), TooShort, FewSamples},
		{"two repeats", MeanOf([]float64{100, 101}), MeanOf([]float64{150, 151, 152}), TooShort, FewSamples},
		{"a mean indistinguishable from zero", MeanOf([]float64{1, 50, 2}), MeanOf([]float64{100, 101, 102}), TooShort, NearZero},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare(tc.a, tc.b, DefaultMargin)
			if c.Verdict != tc.want || c.Why != tc.why {
				t.Errorf("%+v: verdict %v (why %v), want %v (why %v)", c, c.Verdict, c.Why, tc.want, tc.why)
			}
			if c.Bounded && (c.Lo <= 0 || math.IsInf(c.Hi, 0) || c.Lo > c.Ratio || c.Hi < c.Ratio) {
				t.Errorf("interval %v–%v around %v", c.Lo, c.Hi, c.Ratio)
			}
		})
	}
}

// On the log scale b ÷ a and a ÷ b have reciprocal intervals, and the bounds are the
// log mean difference ± t·SE at Welch's degrees of freedom.
func TestCompareLogInterval(t *testing.T) {
	a := Estimate{Mean: 100, SE: 2, DF: 9, N: 10, Of: Seconds}
	b := Estimate{Mean: 110, SE: 2.2, DF: 9, N: 10, Of: Seconds}
	c := Compare(a, b, DefaultMargin)
	// Equal relative errors and DF: Welch gives 18 degrees of freedom.
	h := t975(18) * math.Sqrt(2*sqr(0.02))
	if math.Abs(c.Lo-1.1*math.Exp(-h)) > 1e-12 || math.Abs(c.Hi-1.1*math.Exp(h)) > 1e-12 {
		t.Errorf("interval %v–%v, want 1.1·e^∓%v", c.Lo, c.Hi, h)
	}
	r := Compare(b, a, DefaultMargin)
	if math.Abs(r.Lo*c.Hi-1) > 1e-12 || math.Abs(r.Hi*c.Lo-1) > 1e-12 {
		t.Errorf("a ÷ b %v–%v is not the reciprocal of b ÷ a %v–%v", r.Lo, r.Hi, c.Lo, c.Hi)
	}
}

func TestDecide(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   Verdict
	}{
		{0.97, 1.03, NoDifference},
		{1.01, 1.04, NoDifference}, // above 1, but within what runs repeat
		{0.95, 1.02, TooShort},     // 0.95 < 1/1.05
		{1.02, 1.09, Higher},
		{0.31, 0.42, Lower},
		{0.8, 1.3, TooShort},
		{math.Inf(-1), math.Inf(1), TooShort},
	}
	for _, tc := range tests {
		if got := Decide(tc.lo, tc.hi, DefaultMargin); got != tc.want {
			t.Errorf("Decide(%v, %v) = %v, want %v", tc.lo, tc.hi, got, tc.want)
		}
	}
	// The margin is the caller's: a measured 2% makes 1.01-1.04 a difference, 8% makes
	// 0.95-1.02 none.
	if got := Decide(1.01, 1.04, 0.02); got != Higher {
		t.Errorf("Decide(1.01, 1.04) within ±2%% = %v, want Higher", got)
	}
	if got := Decide(0.95, 1.02, 0.08); got != NoDifference {
		t.Errorf("Decide(0.95, 1.02) within ±8%% = %v, want NoDifference", got)
	}
}

func TestMarginText(t *testing.T) {
	for m, want := range map[Margin]string{DefaultMargin: "±5%", 0.0312: "±3.1%", 0.1: "±10%", 0.0049: "±0.5%"} {
		if got := m.Text(); got != want {
			t.Errorf("Margin(%v).Text() = %q, want %q", float64(m), got, want)
		}
	}
}

func TestMoreData(t *testing.T) {
	c := Compare(series(repeat(20, 60, 60, 140, 140)...), series(repeat(20, 62, 62, 142, 142)...), DefaultMargin)
	f := c.MoreData()
	// Shrink the half-width by √f and the interval fits the margin.
	d, h := math.Log(c.Ratio), math.Log(c.Hi/c.Lo)/2/math.Sqrt(f)
	if f <= 1 || Decide(math.Exp(d-h), math.Exp(d+h), c.Margin) == TooShort {
		t.Errorf("MoreData %v does not decide %v–%v", f, c.Lo, c.Hi)
	}
	if Compare(series(repeat(20, 99, 101)...), series(repeat(20, 119, 121)...), DefaultMargin).MoreData() != 0 {
		t.Error("a decided comparison asks for more data")
	}
}

func TestGoals(t *testing.T) {
	tests := []struct {
		name      string
		got, want GoalVerdict
	}{
		{"at least, whole range above", AtLeast(4.02, 4.7, 4, true), GoalMet},
		{"at least, straddles", AtLeast(3.7, 4.6, 4, true), GoalNotShown},
		{"at least, whole range below", AtLeast(2.9, 3.5, 4, true), GoalMissed},
		{"at least, no range", AtLeast(4.5, 4.5, 4, false), GoalNotShown},
		{"at most, whole range under", AtMost(0.26, 0.29, 0.30, true), GoalMet},
		{"at most, straddles", AtMost(0.28, 0.33, 0.30, true), GoalNotShown},
		{"at most, whole range over", AtMost(0.37, 0.41, 0.30, true), GoalMissed},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
