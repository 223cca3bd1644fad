package stats

import "math"

// Estimate is a mean with the standard error of that mean and the degrees of freedom the
// error was estimated with. DF 0 means the spread is unknown (one value, or a series too
// short to say): the mean is then all there is.
type Estimate struct {
	Mean float64
	SE   float64
	DF   int
}

// Known reports whether the estimate carries a spread.
func (e Estimate) Known() bool { return e.DF > 0 }

// Half95 is the half-width of the mean's 95% confidence interval: t(0.975, DF) × SE; 0 when
// the spread is unknown.
func (e Estimate) Half95() float64 {
	if !e.Known() {
		return 0
	}
	return t975(e.DF) * e.SE
}

// MeanOf estimates the mean of independent values, such as the TPS of a point's repeats:
// SE = s/√n with n-1 degrees of freedom.
func MeanOf(xs []float64) Estimate {
	n := len(xs)
	if n < 2 {
		return Estimate{Mean: Mean(xs)}
	}
	return Estimate{Mean: Mean(xs), SE: stddev(xs) / math.Sqrt(float64(n)), DF: n - 1}
}

// Batch sizing for SeriesMean.
const (
	minBatchLen = 2  // seconds per batch at least: neighbouring seconds are correlated
	batchCount  = 10 // the number of batches aimed for (Schmeiser: 10 to 30)
)

// SeriesMean estimates the mean of a per-second series by the method of non-overlapping
// batch means. Consecutive seconds of one run are autocorrelated (a stall spills into the
// next second, TCP's window carries over), so s/√n of the raw seconds understates the
// error. The series is cut into k ≈ 10 batches of b = max(2, ⌊n/10⌋) seconds; the batch
// means are close to independent and normal, and SE = sd(batch means)/√k with k-1 degrees
// of freedom. Ten batches follow Schmeiser, "Batch size effects in the analysis of
// simulation output", Operations Research 30(3), 1982, which finds 10 to 30 batches
// enough; fewer, longer batches absorb more autocorrelation at a larger t quantile. The
// n mod b seconds left over are dropped from the start (nearest the warm-up) for the SE;
// Mean is over all seconds. Fewer than 4 seconds give no spread.
//
// resolution is the step of the readings (1 for transactions counted per second). Each
// reading is then off by up to half a step, a uniform error of variance resolution²/12,
// so the SE is never below resolution/√(12·m) for the m seconds used: a full link that
// reports the same count every second has a spread below what the series can show, not
// a spread of zero (a zero-width interval would call a 1% difference certain).
func SeriesMean(xs []float64, resolution float64) Estimate {
	n := len(xs)
	b := max(minBatchLen, n/batchCount)
	k := n / b
	if k < 2 {
		return Estimate{Mean: Mean(xs)}
	}
	batches := make([]float64, k)
	rest := xs[n-k*b:]
	for i := range batches {
		batches[i] = Mean(rest[i*b : (i+1)*b])
	}
	se := max(stddev(batches)/math.Sqrt(float64(k)), resolution/math.Sqrt(12*float64(k*b)))
	return Estimate{Mean: Mean(xs), SE: se, DF: k - 1}
}

// RatioCI is a ratio of two means with its 95% confidence interval. Known is false when
// neither mean had a spread; Lo and Hi are then the ratio itself. An interval that does
// not close (the denominator could be zero) has Lo = -Inf and Hi = +Inf.
type RatioCI struct {
	Ratio, Lo, Hi float64
	Known         bool
}

// Crosses1 reports whether the interval includes 1: the data cannot tell the two means
// apart. An unknown spread never crosses (there is nothing to tell with).
func (r RatioCI) Crosses1() bool { return r.Known && r.Lo <= 1 && r.Hi >= 1 }

// Ratio95 is num.Mean ÷ den.Mean with the 95% confidence interval of Fieller's theorem
// (E. C. Fieller, "Some problems in interval estimation", JRSS B 16(2), 1954) for two
// independent means: the θ with (num − θ·den)² ≤ t²(SEnum² + θ²·SEden²), i.e.
//
//	θ = (ab ± t·√(a²·vb + b²·va − t²·va·vb)) / (a² − t²·va),  a = den, b = num, v = SE²
//
// It is exact for normal means, and unlike the delta method it is asymmetric around the
// ratio and honest when the denominator is uncertain: if a² ≤ t²·va the set is unbounded.
// The means are of quantities that cannot be negative (throughputs, byte counts), so a
// lower bound below 0 is cut at 0: a confidence set intersected with the possible values
// keeps its coverage.
// t is Student's 0.975 quantile at the smaller of the two degrees of freedom (a
// conservative choice for two estimates of different size). An estimate with unknown
// spread counts as exact; with both unknown the ratio has no interval.
func Ratio95(num, den Estimate) RatioCI {
	a, b := den.Mean, num.Mean
	if a == 0 {
		return RatioCI{Ratio: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1), Known: num.Known() || den.Known()}
	}
	r := RatioCI{Ratio: b / a, Lo: b / a, Hi: b / a}
	df := 0
	for _, e := range []Estimate{num, den} {
		if e.Known() && (df == 0 || e.DF < df) {
			df = e.DF
		}
	}
	if df == 0 {
		return r
	}
	r.Known = true
	t := t975(df)
	va, vb := sqr(den.SE), sqr(num.SE)
	if !den.Known() {
		va = 0
	}
	if !num.Known() {
		vb = 0
	}
	q := a*a - t*t*va
	disc := a*a*vb + b*b*va - t*t*va*vb
	if q <= 0 || disc < 0 {
		r.Lo, r.Hi = math.Inf(-1), math.Inf(1)
		return r
	}
	w := t * math.Sqrt(disc)
	r.Lo, r.Hi = max((a*b-w)/q, 0), (a*b+w)/q
	return r
}

func sqr(x float64) float64 { return x * x }
