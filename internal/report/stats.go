package report

import "math"

// mean of xs; 0 for none.
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// ci95 is the mean of xs and the half-width of its two-sided 95% confidence interval
// under Student's t (half is 0 for fewer than two samples). It stands in for
// metrics.CI95 so report does not wait on that package; the two must agree.
func ci95(xs []float64) (m, half float64) {
	m = mean(xs)
	n := len(xs)
	if n < 2 {
		return m, 0
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	sd := math.Sqrt(ss / float64(n-1))
	return m, tQuantile975(n-1) * sd / math.Sqrt(float64(n))
}

// t975 holds Student's t 0.975 quantiles for 1..30 degrees of freedom.
var t975 = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// tQuantile975 is Student's t 0.975 quantile for df degrees of freedom: tabulated up to 30,
// then the Cornish-Fisher expansion around the normal quantile (error < 1e-3 there).
func tQuantile975(df int) float64 {
	if df < 1 {
		return math.NaN()
	}
	if df <= len(t975) {
		return t975[df-1]
	}
	const z = 1.959963984540054
	v := float64(df)
	z3, z5 := z*z*z, z*z*z*z*z
	return z + (z3+z)/(4*v) + (5*z5+16*z3+3*z)/(96*v*v)
}
