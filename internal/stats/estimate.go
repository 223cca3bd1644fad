package stats

import "math"

// Basis is what an estimate's spread rests on; reports name it next to every interval.
type Basis int

const (
	OneMean Basis = iota // a mean without the readings behind it: no spread
	Seconds              // the per-second readings of one run, by batch means
	Repeats              // the means of independent repeats
)

// Estimate is a mean with the standard error of that mean and the degrees of freedom the
// error was estimated with. DF 0 means the spread is unknown (one value, or a series too
// short to say): the mean is then all there is, and a comparison with it cannot decide.
// N is the number of batches or repeats the spread came from, or would have come from
// had there been enough: a report prints it as it is. Lo and Hi are the lowest and
// highest reading behind the mean (seconds or repeats), for describing what was seen
// where no interval can be claimed.
type Estimate struct {
	Mean   float64
	SE     float64
	DF     int
	N      int
	Of     Basis
	Lo, Hi float64
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

// Single is a mean with nothing behind it, such as a point from a result file that kept
// no per-second series.
func Single(mean float64) Estimate {
	return Estimate{Mean: mean, N: 1, Of: OneMean, Lo: mean, Hi: mean}
}

// MeanOf estimates the mean of independent values, such as the TPS of a point's repeats:
// SE = s/√n with n-1 degrees of freedom.
func MeanOf(xs []float64) Estimate {
	e := Estimate{Mean: Mean(xs), N: len(xs), Of: Repeats}
	e.Lo, e.Hi = extent(xs)
	if len(xs) >= 2 {
		e.SE, e.DF = stddev(xs)/math.Sqrt(float64(len(xs))), len(xs)-1
	}
	return e
}

// Batch sizing for SeriesMean.
const (
	minBatchLen = 2  // seconds per batch at least: neighbouring seconds are correlated
	batchCount  = 10 // the number of batches aimed for (Schmeiser: 10 to 30)
)

// FullBatchSeconds is the steady seconds a series needs for SeriesMean to cut it into the
// batchCount batches it aims for; shorter series get fewer batches of minBatchLen.
const FullBatchSeconds = batchCount * minBatchLen

// SeriesMean estimates the mean of a per-second series by the method of non-overlapping
// batch means. Consecutive seconds of one run are autocorrelated (a stall spills into the
// next second, TCP's window carries over), so s/√n of the raw seconds understates the
// error. The series is cut into k ≈ 10 batches of b = max(2, ⌊n/10⌋) seconds; the batch
// means are close to independent and normal, and SE = sd(batch means)/√k with k-1 degrees
// of freedom. Ten batches follow Schmeiser, "Batch size effects in the analysis of
// simulation output", Operations Research 30(3), 1982, which finds 10 to 30 batches
// enough; fewer, longer batches absorb more autocorrelation at a larger t quantile. The
// n mod b seconds left over are dropped from the start (nearest the warm-up) for the SE;
// Mean is over all seconds.
//
// A series that gives fewer than MinSamples batches (under 6 seconds) has no spread: two
// batches are one degree of freedom, t = 12.7, an interval wider than anything the lab
// measures. N still says how many batches there were.
//
// resolution is the step of the readings (1 for transactions counted per second). Each
// reading is then off by up to half a step, a uniform error of variance resolution²/12,
// so the SE is never below resolution/√(12·m) for the m seconds used: a full link that
// reports the same count every second has a spread below what the series can show, not
// a spread of zero (a zero-width interval would call a 1% difference certain).
func SeriesMean(xs []float64, resolution float64) Estimate {
	batches, b := BatchMeans(xs)
	k := len(batches)
	e := Estimate{Mean: Mean(xs), N: k, Of: Seconds}
	e.Lo, e.Hi = extent(xs)
	if k < MinSamples {
		return e
	}
	e.SE = max(stddev(batches)/math.Sqrt(float64(k)), resolution/math.Sqrt(12*float64(k*b)))
	e.DF = k - 1
	return e
}

// SeriesRatio estimates Σxs ÷ Σys of two per-second series read together, such as the
// bytes a point put on the wire each second over the queries it ran that second: bytes
// per query. Dividing by the work done takes out what the load generator's arrivals add
// (a fixed-rate load of 50 transactions a second varies 9-15% from second to second, and
// the bytes with it), which a mean of the bytes alone keeps. The seconds are cut into
// batches as SeriesMean cuts them; each batch gives its own Σx ÷ Σy (bytes sent in one
// second may belong to the previous second's queries: a batch of two seconds or more
// carries most of them with their queries), and SE = sd(batch ratios)/√k with k-1 degrees
// of freedom. A batch with no work (Σy ≤ 0) makes the spread unknown, as does a series
// under MinSamples batches. Lo and Hi are the lowest and highest ratio of one second
// (those with work), the readings a report quotes where it can claim no interval.
//
// rx and ry are the steps of the two readings (1 for bytes or queries counted each
// second). As in SeriesMean, each reading is off by up to half a step, so the SE is never
// below what that alone puts on the ratio of the sums over the m seconds used: the ratio
// × √(m/12 · ((rx/Σx)² + (ry/Σy)²)). A link that carries the same bytes per query every
// second then has a spread below what the series can show, not a spread of zero.
func SeriesRatio(xs, ys []float64, rx, ry float64) Estimate {
	n := min(len(xs), len(ys))
	var sx, sy float64
	var each []float64
	for i := range n {
		sx, sy = sx+xs[i], sy+ys[i]
		if ys[i] > 0 {
			each = append(each, xs[i]/ys[i])
		}
	}
	bt := batchesOf(n)
	k := bt.k
	e := Estimate{N: k, Of: Seconds}
	if sy <= 0 {
		return e
	}
	e.Mean = sx / sy
	e.Lo, e.Hi = extent(each)
	if k < MinSamples {
		return e
	}
	ratios := make([]float64, k)
	var ux, uy float64 // the sums over the seconds the batches use
	for i := range ratios {
		var bx, by float64
		lo, hi := bt.span(i)
		for j := lo; j < hi; j++ {
			bx, by = bx+xs[j], by+ys[j]
		}
		if by <= 0 {
			return e
		}
		ratios[i] = bx / by
		ux, uy = ux+bx, uy+by
	}
	floor := 0.0
	if ux != 0 {
		m := float64(k * bt.b)
		floor = math.Abs(ux/uy) * math.Sqrt(m/12*(sqr(rx/ux)+sqr(ry/uy)))
	}
	e.SE, e.DF = max(stddev(ratios)/math.Sqrt(float64(k)), floor), k-1
	return e
}

// batchLayout is how SeriesMean and SeriesRatio cut n seconds into k batches of b: the
// n mod b seconds left over are the first ones (nearest the warm-up).
type batchLayout struct{ n, k, b int }

func batchesOf(n int) batchLayout {
	b := max(minBatchLen, n/batchCount)
	return batchLayout{n: n, k: n / b, b: b}
}

// span is batch i's seconds, [lo, hi).
func (l batchLayout) span(i int) (lo, hi int) {
	lo = l.n - l.k*l.b + i*l.b
	return lo, lo + l.b
}

// extent is the lowest and highest of xs; 0, 0 for none.
func extent(xs []float64) (lo, hi float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	lo, hi = xs[0], xs[0]
	for _, x := range xs[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// RatioCI is a ratio with a range the true ratio lies in, such as the range two search
// brackets allow. Known is false when there is no range; Lo and Hi are then the ratio.
type RatioCI struct {
	Ratio, Lo, Hi float64
	Known         bool
}

func sqr(x float64) float64 { return x * x }
