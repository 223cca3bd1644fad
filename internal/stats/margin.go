package stats

import (
	"errors"
	"fmt"
	"math"
)

// RunSpread is a machine's run-to-run spread, measured from repeats of the same points
// (each group the TPS of one setting's repeats), and the margin it gives.
//
// Within a group the repeats differ only by the run: SDLog is the standard deviation of
// log TPS pooled over the groups, with DF = Σ(nᵢ − 1) degrees of freedom. Two runs of one
// point then differ in log TPS by about N(0, 2·SDLog²), so 95% of their ratios lie within
// exp(±1.96·√2·SDLog): that bound, less 1, is the Margin. Lo and Hi are its 95% interval,
// from the chi-square interval on SDLog (DF·s²/σ² ~ χ²(DF)).
type RunSpread struct {
	SDLog  float64
	DF     int
	Margin Margin
	Lo, Hi Margin
	// GroupSDLog is each group's own standard deviation of log TPS.
	GroupSDLog []float64
}

// z975 is the 0.975 quantile of the standard normal.
const z975 = 1.959963984540054

// ErrTooFewRuns means the repeats cannot estimate a spread.
var ErrTooFewRuns = errors.New("too few runs for a spread")

// MeasureMargin estimates the run-to-run spread from groups of repeats (TPS, each > 0).
// Every group needs two repeats or more, and the groups together two degrees of freedom
// or more (an interval on one is unbounded in practice).
func MeasureMargin(groups [][]float64) (RunSpread, error) {
	var ss float64
	df := 0
	each := make([]float64, len(groups))
	for i, g := range groups {
		if len(g) < 2 {
			return RunSpread{}, fmt.Errorf("group %d has %d run(s), want 2 or more: %w", i+1, len(g), ErrTooFewRuns)
		}
		logs := make([]float64, len(g))
		for j, x := range g {
			if x <= 0 || math.IsNaN(x) || math.IsInf(x, 0) {
				return RunSpread{}, fmt.Errorf("group %d, run %d: TPS %v, want a positive figure", i+1, j+1, x)
			}
			logs[j] = math.Log(x)
		}
		m := Mean(logs)
		for _, l := range logs {
			ss += sqr(l - m)
		}
		each[i] = stddev(logs)
		df += len(g) - 1
	}
	if df < 2 {
		return RunSpread{}, fmt.Errorf("%d degree(s) of freedom, want 2 or more: %w", df, ErrTooFewRuns)
	}
	sd := math.Sqrt(ss / float64(df))
	margin := func(s float64) Margin { return Margin(math.Expm1(z975 * math.Sqrt2 * s)) }
	lo := sd * math.Sqrt(float64(df)/chi2Quantile(0.975, df))
	hi := sd * math.Sqrt(float64(df)/chi2Quantile(0.025, df))
	return RunSpread{SDLog: sd, DF: df, Margin: margin(sd), Lo: margin(lo), Hi: margin(hi), GroupSDLog: each}, nil
}

// chi2Quantile is the p-quantile (0 < p < 1) of the chi-square distribution with df
// degrees of freedom, by bisection on its distribution function to 1e-12 of the value.
func chi2Quantile(p float64, df int) float64 {
	lo, hi := 0.0, float64(df)+10*math.Sqrt(2*float64(df))+10
	for chi2CDF(hi, df) < p {
		hi *= 2
	}
	for hi-lo > 1e-12*max(hi, 1e-300) {
		mid := (lo + hi) / 2
		if chi2CDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// chi2CDF is P(X ≤ x) for X ~ χ²(df): the regularized lower incomplete gamma P(df/2, x/2).
func chi2CDF(x float64, df int) float64 {
	if x <= 0 {
		return 0
	}
	return gammaP(float64(df)/2, x/2)
}

// gammaP is the regularized lower incomplete gamma function P(a, x), by its series below
// x = a+1 and by the continued fraction of Q = 1 − P above (Numerical Recipes, 6.2).
func gammaP(a, x float64) float64 {
	lg, _ := math.Lgamma(a)
	front := math.Exp(-x + a*math.Log(x) - lg)
	if x < a+1 {
		sum, term := 1/a, 1/a
		for n := 1; n < 1000 && math.Abs(term) > math.Abs(sum)*1e-16; n++ {
			term *= x / (a + float64(n))
			sum += term
		}
		return sum * front
	}
	// Lentz's method for the continued fraction of Q(a, x).
	const tiny = 1e-300
	b := x + 1 - a
	c, d := 1/tiny, 1/b
	h := d
	for i := 1; i < 1000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-16 {
			break
		}
	}
	return 1 - front*h
}
