package stats

import (
	"errors"
	"math"
	"sort"
)

// MannWhitney is a two-sided Mann-Whitney U test (Wilcoxon rank-sum) of x against y, as
// R's wilcox.test(x, y) computes it: the exact distribution of U when both samples have
// fewer than 50 values and no ties, else the normal approximation with the tie
// correction and a continuity correction of 0.5.
type MannWhitney struct {
	U     float64 // R's W: the rank sum of x less n_x(n_x+1)/2
	P     float64 // two-sided p-value
	Exact bool    // P from the exact distribution
	NX    int
	NY    int
}

// ErrTooFewSamples means a side of a test has no values.
var ErrTooFewSamples = errors.New("too few samples")

// exactLimit: R's wilcox.test uses the exact distribution below 50 values a side.
const exactLimit = 50

// MannWhitneyU tests whether x and y come from the same distribution.
func MannWhitneyU(x, y []float64) (MannWhitney, error) {
	m, n := len(x), len(y)
	if m == 0 || n == 0 {
		return MannWhitney{}, ErrTooFewSamples
	}
	ranks, ties := rank(append(append([]float64(nil), x...), y...))
	var rx float64
	for _, r := range ranks[:m] {
		rx += r
	}
	u := rx - float64(m*(m+1))/2
	res := MannWhitney{U: u, NX: m, NY: n}
	if m < exactLimit && n < exactLimit && len(ties) == 0 {
		res.Exact = true
		d := uDistribution(m, n)
		var p float64
		if u > float64(m*n)/2 {
			p = d.upper(int(u))
		} else {
			p = d.lower(int(u))
		}
		res.P = math.Min(1, 2*p)
		return res, nil
	}
	mn, N := float64(m*n), float64(m+n)
	z := u - mn/2
	var tieSum float64
	for _, t := range ties {
		tieSum += float64(t*t*t - t)
	}
	sigma := math.Sqrt(mn / 12 * ((N + 1) - tieSum/(N*(N-1))))
	if sigma == 0 { // every value equal: nothing to tell them apart
		res.P = 1
		return res, nil
	}
	z = (z - math.Copysign(0.5, z)) / sigma
	if u == mn/2 {
		z = 0
	}
	res.P = math.Min(1, 2*normalCDF(-math.Abs(z)))
	return res, nil
}

// rank gives each value its rank among xs (1-based, ties share the mean of their ranks)
// and the sizes of the groups of ties.
func rank(xs []float64) ([]float64, []int) {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	ranks := make([]float64, len(xs))
	var ties []int
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && xs[idx[j]] == xs[idx[i]] {
			j++
		}
		r := float64(i+j+1) / 2 // mean of ranks i+1 .. j
		for k := i; k < j; k++ {
			ranks[idx[k]] = r
		}
		if j-i > 1 {
			ties = append(ties, j-i)
		}
		i = j
	}
	return ranks, ties
}

// uDist is the null distribution of U for samples of m and n values: the number of
// orderings giving each U, and their total, C(m+n, m).
type uDist struct {
	count []float64
	total float64
}

// uDistribution counts orderings with the recurrence f(m,n,u) = f(m-1,n,u-n) + f(m,n-1,u):
// the largest value is either one of x's (beating all n of y's) or one of y's.
func uDistribution(m, n int) uDist {
	// f[j] holds f(i, j, ·) for the current i.
	f := make([][]float64, n+1)
	for j := range f {
		f[j] = []float64{1} // f(0, j, 0) = 1
	}
	for i := 1; i <= m; i++ {
		next := make([][]float64, n+1)
		next[0] = []float64{1} // f(i, 0, 0) = 1
		for j := 1; j <= n; j++ {
			cur := make([]float64, i*j+1)
			for u, c := range next[j-1] { // y's value last
				cur[u] += c
			}
			for u, c := range f[j] { // x's value last: beats all j of y's
				cur[u+j] += c
			}
			next[j] = cur
		}
		f = next
	}
	d := uDist{count: f[n]}
	for _, c := range d.count {
		d.total += c
	}
	return d
}

// lower is P(U <= u).
func (d uDist) lower(u int) float64 {
	var s float64
	for i := 0; i <= u && i < len(d.count); i++ {
		s += d.count[i]
	}
	return s / d.total
}

// upper is P(U >= u).
func (d uDist) upper(u int) float64 {
	var s float64
	for i := max(u, 0); i < len(d.count); i++ {
		s += d.count[i]
	}
	return s / d.total
}

// normalCDF is the standard normal distribution function.
func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// Shift is the Hodges-Lehmann estimate of how far y lies above x (the median of every
// difference y_j − x_i) with its confidence interval, as R's wilcox.test(y, x,
// conf.int = TRUE) gives it in the exact case: the differences at the ranks the U
// distribution's quantiles name. With 50 values or more a side, or ties, the ranks come
// from the normal approximation. OK is false when the samples are too small for any
// interval at this level (3 values a side at 95%).
type Shift struct {
	Est, Lo, Hi float64
	OK          bool
}

// ShiftCI estimates the shift of y over x at confidence level conf (0.95).
func ShiftCI(x, y []float64, conf float64) Shift {
	m, n := len(x), len(y)
	if m == 0 || n == 0 {
		return Shift{}
	}
	diffs := make([]float64, 0, m*n)
	for _, yi := range y {
		for _, xi := range x {
			diffs = append(diffs, yi-xi)
		}
	}
	sort.Float64s(diffs)
	s := Shift{Est: Median(diffs)}
	alpha := 1 - conf
	var qu int // the count of differences cut from each end, plus one
	if _, ties := rank(append(append([]float64(nil), x...), y...)); m < exactLimit && n < exactLimit && len(ties) == 0 {
		d := uDistribution(m, n)
		// R's qwilcox(alpha/2): the smallest u with P(U <= u) >= alpha/2. At 0 the level
		// cannot be reached (R then widens the interval and warns; this says so instead).
		for qu = 0; qu < m*n && d.lower(qu) < alpha/2; qu++ {
		}
		if qu == 0 {
			return s
		}
	} else {
		mn := float64(m * n)
		qu = int(math.Floor(mn/2 - normalQuantile(1-alpha/2)*math.Sqrt(mn*float64(m+n+1)/12)))
		if qu < 1 {
			return s
		}
	}
	s.Lo, s.Hi, s.OK = diffs[qu-1], diffs[m*n-qu], true
	return s
}

// normalQuantile is the standard normal quantile by bisection on normalCDF (used once per
// interval: speed does not matter, a dependency-free exact inverse does).
func normalQuantile(p float64) float64 {
	lo, hi := -40.0, 40.0
	for i := 0; i < 200; i++ {
		mid := (lo + hi) / 2
		if normalCDF(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
