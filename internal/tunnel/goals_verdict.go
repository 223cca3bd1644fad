package tunnel

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/stats"
)

// Verdict is a goal's verdict as the goals file and its tables write it.
type Verdict string

const (
	Met      Verdict = "met"       // the whole 95% interval clears the goal
	Missed   Verdict = "missed"    // the whole interval falls short of it
	NotShown Verdict = "not shown" // the interval straddles the goal, or there is none
)

func verdictOf(v stats.GoalVerdict) Verdict {
	switch v {
	case stats.GoalMet:
		return Met
	case stats.GoalMissed:
		return Missed
	}
	return NotShown
}

// Case is one condition a goal was measured at ("2 threads", "1200 QPS"): the figure, the
// 95% interval it lies in (Lo and Hi, set only when Bounded), how many independent units
// the interval rests on (N: rounds, batches, probes) and how it was made (Basis), and the
// interval's verdict against the goal.
type Case struct {
	Name    string  `json:"case"`
	Figure  float64 `json:"figure"`
	Lo      float64 `json:"lo,omitempty"`
	Hi      float64 `json:"hi,omitempty"`
	Bounded bool    `json:"bounded"`
	N       int     `json:"n"`
	Basis   string  `json:"interval_from"`
	Verdict Verdict `json:"verdict"`
}

// Judgement is one goal judged on one measurement: every case it was measured at and the
// goal's verdict, with the command that measured it and when.
type Judgement struct {
	Goal    string  `json:"goal"`
	Target  string  `json:"target"` // the bound judged against, "≥ 2.5×"
	Verdict Verdict `json:"verdict"`
	Cases   []Case  `json:"cases"`
	Command string  `json:"command,omitempty"`
	Date    string  `json:"date,omitempty"`
}

// Judge reads each case's interval against g and the goal from its cases. A goal holds at
// every case it names (both thread counts, every load), so it is met only when every case
// is met, missed as soon as one case is missed, and not shown otherwise (or with no case).
func (g Goal) Judge(cases []Case) Judgement {
	j := Judgement{Goal: g.Key, Target: g.Bound(), Cases: make([]Case, len(cases))}
	met, missed := len(cases) > 0, false
	for i, c := range cases {
		c.Verdict = verdictOf(g.verdict(c.Lo, c.Hi, c.Bounded))
		if !c.Bounded {
			c.Lo, c.Hi = 0, 0
		}
		met = met && c.Verdict == Met
		missed = missed || c.Verdict == Missed
		j.Cases[i] = c
	}
	switch {
	case missed:
		j.Verdict = Missed
	case met:
		j.Verdict = Met
	default:
		j.Verdict = NotShown
	}
	return j
}

// Sentence is the judgement in one line, as the replication study's headlines print it:
// "Goal replication-load ≥ 4.0× (maximum sustainable ...): 2.95× at 2 Mbit/s, RTT 250 ms
// (2.25–3.84×; the limits fitted to ...) — missed." Each case carries its own verdict where there
// are several.
func (j Judgement) Sentence() string {
	g, _ := GoalByKey(j.Goal)
	var each []string
	verdict := string(j.Verdict)
	for _, c := range j.Cases {
		s := fmt.Sprintf("%s at %s (%s; %s)", g.figureText(c.Figure), c.Name, g.intervalText(c), c.Basis)
		if len(j.Cases) > 1 {
			s += " " + c.verdictText(g)
		} else {
			verdict = c.verdictText(g)
		}
		each = append(each, s)
	}
	return fmt.Sprintf("Goal %s %s (%s): %s — %s.", j.Goal, j.Target, g.Measure, strings.Join(each, "; "), verdict)
}

// verdictText is the case's verdict with why it is not shown: "met", "not shown (the
// interval straddles ≥ 1.0×)", "not shown (no interval)".
func (c Case) verdictText(g Goal) string {
	switch {
	case c.Verdict != NotShown:
		return string(c.Verdict)
	case c.Bounded:
		return "not shown (the interval straddles " + g.Bound() + ")"
	}
	return "not shown (no interval)"
}

// figureText is a figure in the goal's unit: "1.03×", "0.42 s".
func (g Goal) figureText(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + g.Unit
}

// intervalText is the case's interval, "0.97–1.10×", or "no interval".
func (g Goal) intervalText(c Case) string {
	if !c.Bounded {
		return "no interval"
	}
	return g.rangeText(c)
}

// rangeText is "0.97–1.10×", or "-" without an interval.
func (g Goal) rangeText(c Case) string {
	if !c.Bounded {
		return "-"
	}
	d := 2
	for d < 4 && strconv.FormatFloat(c.Lo, 'f', d, 64) == strconv.FormatFloat(c.Hi, 'f', d, 64) {
		d++
	}
	return strconv.FormatFloat(c.Lo, 'f', d, 64) + "–" + strconv.FormatFloat(c.Hi, 'f', d, 64) + g.Unit
}
