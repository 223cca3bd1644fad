package stats

import (
	"fmt"
	"strconv"
)

// How every report and headline writes an interval, so the count it rests on is never
// left out.

// SamplesText is what a comparison's interval rests on, as printed next to it: "9
// batches a side", "2 and 9 batches", "3 repeats a side", "one mean a side".
func (c Comparison) SamplesText() string {
	a, b := c.A, c.B
	switch {
	case a.Of == b.Of && a.N == b.N:
		return a.count() + " a side"
	case a.Of == b.Of && a.Of != OneMean:
		return fmt.Sprintf("%d and %s", a.N, b.count())
	}
	return a.count() + " vs " + b.count()
}

// count is "9 batches", "1 repeat", "one mean".
func (e Estimate) count() string {
	if e.Of == OneMean {
		return "one mean"
	}
	unit := map[Basis][2]string{Seconds: {"batch", "batches"}, Repeats: {"repeat", "repeats"}}[e.Of]
	if e.N == 1 {
		return "1 " + unit[0]
	}
	return strconv.Itoa(e.N) + " " + unit[1]
}

// CIText is the interval as findings, tables and headlines quote it, scaled by scale
// (100 for a share) with at least decimals digits, adding digits (up to two) until the
// bounds differ so a tight interval does not read "0.61–0.61": "CI 1.12–1.14, 9 batches a
// side", or "no CI: 2 batches a side" when there is none.
func (c Comparison) CIText(scale float64, decimals int, unit string) string {
	n := c.SamplesText()
	switch {
	case c.Why == NearZero:
		return "no CI: a side's spread is as large as its mean, " + n
	case !c.Bounded:
		return "no CI: " + n
	}
	lo, hi := c.Lo*scale, c.Hi*scale
	d := decimals
	for d < decimals+2 && strconv.FormatFloat(lo, 'f', d, 64) == strconv.FormatFloat(hi, 'f', d, 64) {
		d++
	}
	return "CI " + strconv.FormatFloat(lo, 'f', d, 64) + "–" + strconv.FormatFloat(hi, 'f', d, 64) + unit + ", " + n
}
