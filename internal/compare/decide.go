package compare

import (
	"fmt"
	"math"

	"github.com/wirelab/wirelab/internal/stats"
)

// Change is a run's point against the base's. Ratio and RatioCI are one estimator, the
// Hodges-Lehmann shift of the log values: Ratio is exp of the median of every difference
// ln b_j − ln a_i (every ratio of one of this run's units to one of the base's), and
// RatioCI the differences at the ranks the Mann-Whitney U distribution names, so Ratio
// lies inside RatioCI by construction. P is the Mann-Whitney U test of the same units,
// the test that interval inverts.
type Change struct {
	Ratio float64 `json:"ratio"` // 0 when a side has no values
	// RatioCI is the ratio's 95% interval; nil when the units are too few for one.
	RatioCI *Interval `json:"ratio_ci,omitempty"`
	// Tested is true when each side had MinSamples units and the test ran; P is then its
	// two-sided p-value, which may be 0 (an underflow: far below any level).
	Tested      bool    `json:"tested"`
	P           float64 `json:"p"`
	Significant bool    `json:"significant"`
	// Verdict is "better" or "worse" when the change is called: for TPS more is better,
	// for latency less.
	Verdict string `json:"verdict,omitempty"`
	// Reason says why a change is not called ("~"): too few units, not significant, an
	// interval that includes no change, or within the margin.
	Reason string `json:"reason,omitempty"`
}

// decide tests b against the base a. The change is called when both sides have
// MinSamples units, the Mann-Whitney p is below Alpha, the estimate is further from 1 than
// margin and the interval leaves out no change (the rank test and its interval can
// disagree at the edge: ties, the discrete levels of small samples).
func decide(a, b []float64, margin float64, lowerIsBetter bool) Change {
	var c Change
	la, lb := logs(a), logs(b)
	if len(la) == 0 || len(lb) == 0 {
		return c
	}
	s := stats.ShiftCI(la, lb, confidence)
	c.Ratio = math.Exp(s.Est)
	if s.OK {
		c.RatioCI = &Interval{Lo: math.Exp(s.Lo), Hi: math.Exp(s.Hi)}
	}
	if len(a) < MinSamples || len(b) < MinSamples {
		c.Reason = fmt.Sprintf("need >= %d units a side to test, have %d+%d", MinSamples, len(a), len(b))
		return c
	}
	mw, err := stats.MannWhitneyU(a, b)
	if err != nil {
		c.Reason = err.Error()
		return c
	}
	c.Tested, c.P = true, mw.P
	switch {
	case mw.P >= Alpha:
		c.Reason = fmt.Sprintf("not significant: p = %.3f >= %g", mw.P, Alpha)
	case math.Abs(c.Ratio-1) <= margin:
		c.Reason = fmt.Sprintf("significant (p = %.3g) but within the ±%s margin", mw.P, pctText(margin))
	case c.RatioCI == nil || (c.RatioCI.Lo <= 1 && c.RatioCI.Hi >= 1):
		c.Reason = fmt.Sprintf("p = %.3g but the 95%% interval includes no change", mw.P)
	default:
		c.Significant = true
		c.Verdict = "better"
		if (c.Ratio < 1) != lowerIsBetter {
			c.Verdict = "worse"
		}
	}
	return c
}

// logs is the natural log of every value (values are positive: metric.values sees to it).
func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}

// Geomean is the geometric mean over the rows every run has a median for: of each run's
// medians and of each change's estimate.
type Geomean struct {
	Rows    int       `json:"rows"`
	Medians []float64 `json:"medians"`
	Ratios  []float64 `json:"ratios"`
}

func geomean(rows []Row, runs int) Geomean {
	g := Geomean{Medians: make([]float64, runs), Ratios: make([]float64, runs-1)}
	sumMed, sumRatio := make([]float64, runs), make([]float64, runs-1)
	for _, r := range rows {
		ok := true
		for _, s := range r.Sides {
			ok = ok && s.Median > 0
		}
		if !ok {
			continue
		}
		g.Rows++
		for i, s := range r.Sides {
			sumMed[i] += math.Log(s.Median)
		}
		for i, c := range r.Changes {
			sumRatio[i] += math.Log(c.Ratio)
		}
	}
	if g.Rows == 0 {
		return g
	}
	for i := range sumMed {
		g.Medians[i] = math.Exp(sumMed[i] / float64(g.Rows))
	}
	for i := range sumRatio {
		g.Ratios[i] = math.Exp(sumRatio[i] / float64(g.Rows))
	}
	return g
}
