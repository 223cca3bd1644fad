package stats

import (
	"math"
	"slices"
)

// Trial is one pass/fail test at a level X > 0 (a load a replica did or did not keep up
// with).
type Trial struct {
	X    float64
	Pass bool
}

// Threshold is the level at which a trial passes half the time, with its 95% credible
// interval. OK is false when no trial failed above a passing one: the trials do not bound
// the threshold from both sides, and Est, Lo and Hi are 0.
type Threshold struct {
	Est, Lo, Hi float64
	OK          bool
}

// The model FitThreshold fits: a trial at level x passes with probability
//
//	lapse + (1 − 2·lapse) · Φ((ln T − ln x) / s)
//
// (a probit in the log of the level). s is how far, relative to the threshold T, outcomes
// stay uncertain: not known in advance, so the posterior is averaged over thresholdSpreads
// with equal weight. The lapse keeps one outcome far from the threshold (a probe spoilt by
// something other than the load) from deciding on its own. The lowest spread is a floor:
// outcomes from a few probes that happen to be cleanly separated do not make an interval
// narrower than the probes' own noise allows.
const (
	thresholdLapse = 0.02
	thresholdStep  = 0.004 // grid step in ln T (0.4%)
	thresholdPad   = 0.2   // the grid reaches this far (in ln T) beyond the lowest and highest trial
)

var thresholdSpreads = []float64{0.015, 0.02, 0.03, 0.045, 0.065, 0.09, 0.12}

// FitThreshold is the posterior of the threshold T given the trials, under a prior flat
// in ln T: Est is its median, Lo and Hi its 2.5% and 97.5% quantiles. Each trial counts by
// how likely its outcome is at every candidate T, so probes near the threshold weigh
// more than probes far from it, and repeats at one level add up instead of the last one
// deciding.
func FitThreshold(ts []Trial) Threshold {
	if !bracketed(ts) {
		return Threshold{}
	}
	minX, maxX := math.Inf(1), 0.0
	for _, t := range ts {
		minX, maxX = math.Min(minX, t.X), math.Max(maxX, t.X)
	}
	u0 := math.Log(minX) - thresholdPad
	n := int(math.Ceil((math.Log(maxX)+thresholdPad-u0)/thresholdStep)) + 1
	post := make([]float64, n)
	for _, s := range thresholdSpreads {
		// Each spread's likelihood keeps its own scale (not renormalised): a spread the
		// outcomes fit badly gets little weight. The lapse bounds every factor below by
		// thresholdLapse, so the product cannot underflow for any realistic trial count.
		for i := range post {
			post[i] += math.Exp(logLikelihood(ts, u0+float64(i)*thresholdStep, s))
		}
	}
	cum := make([]float64, n)
	total := 0.0
	for i, p := range post {
		total += p
		cum[i] = total
	}
	if total == 0 || math.IsNaN(total) {
		return Threshold{}
	}
	q := func(p float64) float64 {
		i, _ := slices.BinarySearch(cum, p*total)
		return math.Exp(u0 + float64(min(i, n-1))*thresholdStep)
	}
	return Threshold{Est: q(0.5), Lo: q(0.025), Hi: q(0.975), OK: true}
}

// logLikelihood is the log of the trials' outcomes' probability at threshold exp(u) and
// spread s.
func logLikelihood(ts []Trial, u, s float64) float64 {
	ll := 0.0
	for _, t := range ts {
		p := thresholdLapse + (1-2*thresholdLapse)*normalCDF((u-math.Log(t.X))/s)
		if !t.Pass {
			p = 1 - p
		}
		ll += math.Log(p)
	}
	return ll
}

// bracketed is whether some trial failed above a passing one.
func bracketed(ts []Trial) bool {
	lowestPass := math.Inf(1)
	for _, t := range ts {
		if t.Pass {
			lowestPass = math.Min(lowestPass, t.X)
		}
	}
	for _, t := range ts {
		if !t.Pass && t.X > lowestPass {
			return true
		}
	}
	return false
}
