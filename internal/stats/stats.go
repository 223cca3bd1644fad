package stats

import (
	"math"
	"sort"
	"time"
)

// Mean is the arithmetic mean; 0 for no values, so results stay JSON-encodable.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// stddev is the sample standard deviation (n-1 denominator); 0 for fewer than 2 values.
func stddev(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := Mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// CV is the coefficient of variation: sample standard deviation over the mean. It is 0
// for fewer than 2 values or a zero mean, where it means nothing.
func CV(xs []float64) float64 {
	m := Mean(xs)
	if len(xs) < 2 || m == 0 {
		return 0
	}
	return stddev(xs) / math.Abs(m)
}

// CI95 returns the mean and the half-width of its 95% confidence interval, using
// Student's t with n-1 degrees of freedom (studies repeat a point 3-10 times, where the
// normal 1.96 would understate the interval). half is 0 for fewer than 2 values.
func CI95(xs []float64) (mean, half float64) {
	e := MeanOf(xs)
	return e.Mean, e.Half95()
}

// t975Table holds the 0.975 quantile of Student's t for 1..30 degrees of freedom.
var t975Table = [...]float64{
	12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
}

// t975 is the 0.975 quantile of Student's t: the table up to 30 degrees of freedom, then
// the Cornish-Fisher expansion around the normal quantile (within 0.001 from there on).
func t975(df int) float64 {
	if df <= len(t975Table) {
		return t975Table[df-1]
	}
	const z = 1.959963984540054
	v := float64(df)
	return z + (z*z*z+z)/(4*v) + (5*math.Pow(z, 5)+16*z*z*z+3*z)/(96*v*v)
}

// Percentile is the nearest-rank p-th percentile (0 < p ≤ 100) of xs; 0 for none.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}

// DurationsMs turns durations into milliseconds, for Percentile.
func DurationsMs(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d) / float64(time.Millisecond)
	}
	return out
}

// Median is the middle value of xs (the mean of the two middle ones for an even count);
// 0 for none. xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
