package stats

import (
	"math"
	"strconv"
	"strings"
)

// Margin is how far apart two means may be and still make no measurable difference: a
// ratio whose 95% interval lies wholly within [1/(1+m), 1+m]. It is the machine's
// run-to-run spread (MeasureMargin): a smaller difference found within one run could be
// the run and not the change. Every verdict on a ratio takes it as a value.
type Margin float64

// DefaultMargin is the margin where none was measured on the machine: one 5 s point of the
// quick bandwidth study read up to 5% apart in two runs in the namespace lab.
const DefaultMargin Margin = 0.05

// Text is the margin as reports print it: "±5%", "±3.2%".
func (m Margin) Text() string {
	return "±" + strings.TrimSuffix(strconv.FormatFloat(100*float64(m), 'f', 1, 64), ".0") + "%"
}

// MinSamples is the fewest batches or repeats a side needs for its spread to count. Two
// are one degree of freedom (t = 12.7); three give t = 4.3, the least that still narrows
// an interval to something a finding can use.
const MinSamples = 3

// Verdict is what a comparison of two means can honestly say. Which of Higher and Lower
// helps is the caller's to say (more TPS helps, more wire bytes hurt).
type Verdict int

const (
	TooShort     Verdict = iota // the data cannot decide; Comparison.Why says why
	NoDifference                // the interval lies within the margin
	Higher                      // the interval lies wholly above 1 (and not within the margin)
	Lower                       // the interval lies wholly below 1 (and not within the margin)
)

// Undecided is why a comparison is TooShort.
type Undecided int

const (
	Decided    Undecided = iota
	FewSamples           // a side has fewer than MinSamples batches or repeats, or no spread
	NearZero             // a side's own interval reaches zero: the ratio has no upper bound
	Wide                 // the interval includes 1 and reaches beyond the margin
)

// Comparison is b ÷ a with its 95% interval and the verdict read from it. The interval is
// built on the log scale, where a ratio and its inverse are equally far from 1 and a
// bound can neither be negative nor clipped: ln b − ln a ± t·√((SEa/a)² + (SEb/b)²), the
// delta method's standard error of each log mean, with t at the Welch–Satterthwaite
// degrees of freedom. Lo and Hi are set only when Bounded.
type Comparison struct {
	A, B    Estimate
	Ratio   float64
	Lo, Hi  float64
	Bounded bool
	Verdict Verdict
	Why     Undecided
	Margin  Margin // the margin the verdict was read with
}

// Compare compares b with a within margin m. A side with unknown spread is never treated
// as exact: the comparison is then TooShort, whatever the other side shows.
func Compare(a, b Estimate, m Margin) Comparison {
	c := Comparison{A: a, B: b, Ratio: b.Mean / a.Mean, Margin: m}
	switch {
	case !enough(a) || !enough(b):
		c.Why = FewSamples
		return c
	case a.Mean <= 0 || b.Mean <= 0 || a.Mean <= a.Half95() || b.Mean <= b.Half95():
		c.Why = NearZero
		return c
	}
	va, vb := sqr(a.SE/a.Mean), sqr(b.SE/b.Mean)
	df := a.DF + b.DF
	if va+vb > 0 {
		df = int(sqr(va+vb) / (sqr(va)/float64(a.DF) + sqr(vb)/float64(b.DF)))
	}
	d, h := math.Log(c.Ratio), t975(max(df, 1))*math.Sqrt(va+vb)
	c.Lo, c.Hi, c.Bounded = math.Exp(d-h), math.Exp(d+h), true
	c.Verdict = Decide(c.Lo, c.Hi, m)
	if c.Verdict == TooShort {
		c.Why = Wide
	}
	return c
}

func enough(e Estimate) bool { return e.Known() && e.N >= MinSamples }

// Decide reads a range [lo, hi] that a ratio lies in: NoDifference within margin m,
// Higher or Lower when wholly on one side of 1 (a bound of exactly 1 counts: the bounds
// of a search's brackets are never reached, and an interval's almost surely not), and
// TooShort otherwise. Every verdict of
// wirelab on a ratio comes from here.
func Decide(lo, hi float64, m Margin) Verdict {
	switch {
	case lo >= 1/(1+float64(m)) && hi <= 1+float64(m):
		return NoDifference
	case lo >= 1:
		return Higher
	case hi <= 1:
		return Lower
	}
	return TooShort
}

// MoreData is about how many times the data (seconds or repeats) a Wide comparison would
// need to decide, assuming the spread shrinks as 1/√n: enough to fit the interval within
// the margin or to lift it off 1, whichever comes first. It is 0 for any other comparison.
func (c Comparison) MoreData() float64 {
	if c.Why != Wide {
		return 0
	}
	d, h := math.Abs(math.Log(c.Ratio)), math.Log(c.Hi/c.Lo)/2
	need := max(math.Log(1+float64(c.Margin))-d, d)
	return sqr(h / need)
}

// Order is how two sides' readings lie against each other, with no probability claimed.
type Order int

const (
	Overlap  Order = iota // the ranges of readings overlap
	AllBelow              // every reading of b is below every reading of a
	AllAbove              // every reading of b is above every reading of a
)

// Seen is how b's readings lie against a's: what a report can still say when the
// comparison is TooShort.
func (c Comparison) Seen() Order {
	switch {
	case c.B.Hi < c.A.Lo:
		return AllBelow
	case c.B.Lo > c.A.Hi:
		return AllAbove
	}
	return Overlap
}

// GoalVerdict is how a range a figure lies in stands against a goal.
type GoalVerdict int

const (
	GoalNotShown GoalVerdict = iota // the range straddles the goal, or there is none
	GoalMet                         // the whole range clears the goal
	GoalMissed                      // the whole range falls short of it
)

// AtLeast judges a goal the figure must reach (≥ goal) on the range [lo, hi] it lies in;
// known false means there is no range, and then nothing is shown.
func AtLeast(lo, hi, goal float64, known bool) GoalVerdict {
	switch {
	case !known:
		return GoalNotShown
	case lo >= goal:
		return GoalMet
	case hi < goal:
		return GoalMissed
	}
	return GoalNotShown
}

// AtMost judges a goal the figure must stay under (≤ goal), as AtLeast does.
func AtMost(lo, hi, goal float64, known bool) GoalVerdict {
	return AtLeast(-hi, -lo, -goal, known)
}
