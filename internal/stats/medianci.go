package stats

import (
	"math"
	"sort"
)

// MedianCI is the distribution-free confidence interval of the median at level conf
// (0.95): the order statistics x(k) and x(n+1−k) for the largest k with
// P(Binomial(n, ½) < k) ≤ (1−conf)/2. ok is false below 6 values at 95%, where no such k
// exists (benchstat's "need >= 6 samples for confidence interval at level 0.95").
func MedianCI(xs []float64, conf float64) (lo, hi float64, ok bool) {
	n := len(xs)
	if n == 0 {
		return 0, 0, false
	}
	tail := (1 - conf) / 2
	k := 0
	cum := 0.0 // P(X <= k-1) for X ~ Binomial(n, 1/2)
	for j := 0; j < n/2; j++ {
		cum += binomHalf(n, j)
		if cum > tail {
			break
		}
		k = j + 1
	}
	if k == 0 {
		return 0, 0, false
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[k-1], s[n-k], true
}

// binomHalf is P(X = j) for X ~ Binomial(n, 1/2).
func binomHalf(n, j int) float64 {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x + 1)); return v }
	return math.Exp(lg(n) - lg(j) - lg(n-j) - float64(n)*math.Ln2)
}
