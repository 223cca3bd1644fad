package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

// How the report reads and prints a comparison of two cells. Every verdict comes from
// stats.Compare (through tpsRatio); this file only words it.

// comparison is b ÷ a of two points' figures with what the words need: the unit of the
// readings, and the measured length of a point and whether the study takes --repeat, for
// saying what would decide a comparison the run was too short for.
type comparison struct {
	stats.Comparison
	unit      string
	durationS float64
	canRepeat bool
}

// tooShort words the verdict that cannot decide; the reason follows in the citation.
const tooShort = "too short to tell"

// undecided words a TooShort verdict for a headline: what was seen where every reading of
// one side lies beyond every reading of the other ("was faster in every measured second
// (too short to tell by how much)"), else that the two cannot be told apart yet. It never
// says "no difference": the data did not decide. cs are of one kind of reading.
func undecided(cs []comparison, apart string) string {
	above, below := len(cs) > 0, len(cs) > 0
	for _, c := range cs {
		if c.A.N < 2 || c.B.N < 2 {
			above, below = false, false // one reading a side: nothing to say "every" of
		}
		switch c.Seen() {
		case stats.AllAbove:
			below = false
		case stats.AllBelow:
			above = false
		default:
			above, below = false, false
		}
	}
	switch {
	case above:
		return "was faster in every " + cs[0].readingWord() + " (" + tooShort + " by how much)"
	case below:
		return "was slower in every " + cs[0].readingWord() + " (" + tooShort + " by how much)"
	}
	return apart + " (" + tooShort + ")"
}

// ciText is the interval as findings and tables quote it: "CI 1.12–1.14, 9 batches a
// side", or "no CI: 2 batches a side" when there is none.
func (c comparison) ciText() string { return c.CIText(1, 2, "") }

// shareCIText is ciText for a ratio shown as a share: "CI 76.9–78.5%, 9 batches a side".
func (c comparison) shareCIText() string { return c.CIText(100, 1, "%") }

// withCI is a ratio as a finding's citation quotes it: "1.13×, CI 1.12–1.14, 9 batches a
// side"; when the data cannot decide it adds what was seen: "0.31×, too short to tell (no
// CI: 2 batches a side; every measured second lower: 435–654 vs 966–2049 TPS)".
func (c comparison) withCI() string {
	if c.Verdict == stats.TooShort && !c.Bounded {
		return fmt.Sprintf("%.2f×, %s (%s; %s)", c.Ratio, tooShort, c.ciText(), c.seen())
	}
	return fmt.Sprintf("%.2f×, %s", c.Ratio, c.ciText())
}

// cell is a ratio for a table cell: "1.13× (CI 1.12–1.14, 9 batches a side)".
func (c comparison) cell() string { return fmt.Sprintf("%.2f× (%s)", c.Ratio, c.ciText()) }

// shareCell is a ratio as a share for a table cell: "77.7% (CI 76.9–78.5%, 9 batches a side)".
func (c comparison) shareCell() string {
	return fmt.Sprintf("%.1f%% (%s)", 100*c.Ratio, c.shareCIText())
}

// seen is what the readings show, with no probability claimed: "every measured second
// lower: 435–654 vs 966–2049 TPS", "measured seconds overlap: …".
func (c comparison) seen() string {
	what := c.readingWord()
	if c.A.Of == stats.OneMean && c.B.Of == stats.OneMean {
		return fmt.Sprintf("%s vs %s %s", num(c.B.Mean), num(c.A.Mean), c.unit)
	}
	rng := func(e stats.Estimate) string {
		if e.Lo == e.Hi {
			return num(e.Lo)
		}
		return num(e.Lo) + "–" + num(e.Hi)
	}
	ranges := rng(c.B) + " vs " + rng(c.A) + " " + c.unit
	switch c.Seen() {
	case stats.AllBelow:
		return "every " + what + " lower: " + ranges
	case stats.AllAbove:
		return "every " + what + " higher: " + ranges
	}
	return what + "s overlap: " + ranges
}

// readingWord names one reading of the comparison: "measured second", "repeat", or
// "reading" where the sides differ in kind.
func (c comparison) readingWord() string {
	if c.A.Of != c.B.Of || c.B.Of == stats.OneMean {
		return "reading"
	}
	return map[stats.Basis]string{stats.Seconds: "measured second", stats.Repeats: "repeat"}[c.B.Of]
}

// toDecide says why a TooShort comparison could not decide and what would: "5 s points
// give 2 batches a side; use --duration 20s or --repeat 3". Empty for a decided one.
func (c comparison) toDecide() string {
	rep := ""
	if c.canRepeat {
		rep = fmt.Sprintf(" or --repeat %d", stats.MinSamples)
	}
	switch c.Why {
	case stats.FewSamples:
		switch {
		case c.A.Of == stats.OneMean || c.B.Of == stats.OneMean:
			return "the points carry no per-second series; a run of this version" + rep + " would decide"
		case c.A.Of == stats.Seconds && c.B.Of == stats.Seconds:
			return fmt.Sprintf("%s s points give %s; use --duration %ds%s",
				fmtX(c.durationS), c.SamplesText(), stats.FullBatchSeconds, rep)
		}
		// Repeats: where the sides differ, a failed repeat left one short of what was asked.
		if c.A.N != c.B.N {
			return fmt.Sprintf("%s, a repeat failed; use --repeat %d", c.SamplesText(), max(c.A.N, c.B.N, stats.MinSamples-1)+1)
		}
		return fmt.Sprintf("%s; use --repeat %d", c.SamplesText(), stats.MinSamples)
	case stats.NearZero:
		return fmt.Sprintf("a side's readings spread as wide as their mean; use --duration %ds%s", 2*int(c.durationS), rep)
	case stats.Wide:
		f := c.MoreData()
		what := fmt.Sprintf("the interval (%s) reaches past the %s margin", c.ciText(), c.Margin.Text())
		switch {
		case f > 10:
			return what + ", and the difference lies too near the margin for a practical run to decide"
		case c.A.Of == stats.Repeats:
			return fmt.Sprintf("%s; about %.0f× the repeats would decide (--repeat %d)", what, math.Ceil(f), int(math.Ceil(f*float64(c.A.N))))
		}
		return fmt.Sprintf("%s; about %.0f× the seconds would decide (--duration %ds)", what, math.Ceil(f), 5*int(math.Ceil(f*c.durationS/5)))
	}
	return ""
}

// spreadNote says where the intervals of a study's ratios come from, on how many batches
// or repeats, and how to read them within margin m (its figure and where it came from).
func spreadNote(es []stats.Estimate, m result.Margin) string {
	type span struct{ lo, hi int }
	counts := map[stats.Basis]*span{}
	for _, e := range es {
		if c := counts[e.Of]; c == nil {
			counts[e.Of] = &span{e.N, e.N}
		} else {
			c.lo, c.hi = min(c.lo, e.N), max(c.hi, e.N)
		}
	}
	count := func(b stats.Basis) string {
		c := counts[b]
		if c.lo == c.hi {
			return strconv.Itoa(c.lo)
		}
		return strconv.Itoa(c.lo) + "–" + strconv.Itoa(c.hi)
	}
	var from []string
	if counts[stats.Repeats] != nil {
		from = append(from, "from the "+count(stats.Repeats)+" repeats of a point (Student's t)")
	}
	if counts[stats.Seconds] != nil {
		from = append(from, "from a point's per-second TPS after warm-up (batch means: "+count(stats.Seconds)+" batches a point)")
	}
	if counts[stats.OneMean] != nil {
		from = append(from, "not at all for points without a per-second series")
	}
	return fmt.Sprintf("Every ratio comes with its 95%% confidence interval (CI, on the log of the ratio) %s. "+
		"A finding says no measurable difference only where the interval lies within the margin, %s; "+
		"helps or hurts where it lies wholly above or below 1.00×; and %s where it straddles that margin or rests on fewer than %d batches or repeats a side, "+
		"then saying what was seen and what would decide.", strings.Join(from, ", "), m.Text(), tooShort, stats.MinSamples)
}
