package tunnel

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/wirelab/wirelab/internal/stats"
)

// Side is which relay a bench row measured: the tunnel, or the one the goal divides the
// tunnel's TPS by (two socat hops, MySQL protocol compression).
type Side string

const (
	SideTunnel Side = "tunnel"
	SideBase   Side = "base"
)

// Row is one measurement a bench made toward a goal: the goal and the case (the condition,
// "32 threads") it belongs to, which side it measured, the bench's own name for it, the
// round (the sides of one round ran back to back), its TPS and the per-second TPS after
// its warm-up (nil when the bench kept none). TPS 0 is a row that failed.
type Row struct {
	Goal    string
	Case    string
	Side    Side
	Name    string
	Round   int
	TPS     float64
	Seconds []float64
}

// JudgeRows judges every goal the rows measure, in the order Goals lists them, each case in
// the order its rows first came. Each case is tunnel ÷ base over the rounds that have both
// sides measured (roundsCase says how its interval is made).
func JudgeRows(rows []Row) ([]Judgement, error) {
	byGoal := map[string][]Row{}
	for _, r := range rows {
		if _, ok := GoalByKey(r.Goal); !ok {
			return nil, fmt.Errorf("row %q: no goal %q (want one of `wirelab tunnel goals`)", r.Name, r.Goal)
		}
		if r.Side != SideTunnel && r.Side != SideBase {
			return nil, fmt.Errorf("row %q: side %q: want %s or %s", r.Name, r.Side, SideTunnel, SideBase)
		}
		byGoal[r.Goal] = append(byGoal[r.Goal], r)
	}
	var out []Judgement
	for _, g := range Goals() {
		rs := byGoal[g.Key]
		if len(rs) == 0 {
			continue
		}
		var names []string
		byCase := map[string][]Row{}
		for _, r := range rs {
			if _, ok := byCase[r.Case]; !ok {
				names = append(names, r.Case)
			}
			byCase[r.Case] = append(byCase[r.Case], r)
		}
		var cases []Case
		for _, n := range names {
			c, err := roundsCase(n, byCase[n])
			if err != nil {
				return nil, fmt.Errorf("goal %s: %w", g.Key, err)
			}
			cases = append(cases, c)
		}
		out = append(out, g.Judge(cases))
	}
	return out, nil
}

// roundPair is one round's two sides.
type roundPair struct{ base, tunnel Row }

// roundsCase is tunnel ÷ base over one case's rounds, with the interval the data allows:
//   - MinSamples or more rounds with both sides measured: the geometric mean of the
//     per-round ratios with the t interval of their logs (paired: each round's sides ran
//     back to back on the same machine state, so what drifts between rounds cancels);
//   - fewer: the batch-means interval of each round's per-second TPS (stats.SeriesMean,
//     compared by stats.Compare), where every such round kept its series (batchMeans);
//   - otherwise no interval (the ratio is still given).
//
// A round with a failed or missing side is left out and the basis says so.
func roundsCase(name string, rows []Row) (Case, error) {
	sides := map[int]*roundPair{}
	var rounds []int
	for _, r := range rows {
		p, ok := sides[r.Round]
		if !ok {
			p = &roundPair{}
			sides[r.Round] = p
			rounds = append(rounds, r.Round)
		}
		slot := &p.base
		if r.Side == SideTunnel {
			slot = &p.tunnel
		}
		if slot.Side != "" {
			return Case{}, fmt.Errorf("case %q: round %d has two %s rows (%q and %q)", name, r.Round, r.Side, slot.Name, r.Name)
		}
		*slot = r
	}
	sort.Ints(rounds)
	var pairs []roundPair
	failed, single := 0, 0
	for _, n := range rounds {
		switch p := sides[n]; {
		case p.base.Side == "" || p.tunnel.Side == "":
			single++
		case p.base.TPS <= 0 || p.tunnel.TPS <= 0:
			failed++
		default:
			pairs = append(pairs, *p)
		}
	}
	c := Case{Name: name, N: len(pairs)}
	switch {
	case len(pairs) >= stats.MinSamples:
		c = pairedRounds(c, pairs)
	case len(pairs) > 0 && haveSeconds(pairs):
		c = batchMeans(c, pairs)
	case len(pairs) > 0:
		c.Figure = math.Exp(stats.Mean(logRatios(pairs)))
		c.Basis = fmt.Sprintf("%s without per-second series (an interval needs %d rounds, or each round's seconds)",
			plural(len(pairs), "round"), stats.MinSamples)
	default:
		c.Basis = "no round with both sides measured"
	}
	if failed > 0 {
		c.Basis += fmt.Sprintf("; %s with a failed row left out", plural(failed, "round"))
	}
	if single > 0 {
		c.Basis += fmt.Sprintf("; %s with one side only left out", plural(single, "round"))
	}
	return c, nil
}

// pairedRounds is the geometric mean of the rounds' ratios and the t interval of their logs.
func pairedRounds(c Case, pairs []roundPair) Case {
	e := stats.MeanOf(logRatios(pairs))
	h := e.Half95()
	c.Figure, c.Lo, c.Hi, c.Bounded = math.Exp(e.Mean), math.Exp(e.Mean-h), math.Exp(e.Mean+h), e.Known()
	c.Basis = fmt.Sprintf("%d paired rounds: geometric mean of the per-round ratios, t interval of their logs", len(pairs))
	return c
}

// batchMeans compares each round's two sides by batch means of their per-second TPS. With
// more than one round the case's interval is the span of the rounds' intervals: two rounds
// that disagree widen it rather than average away.
func batchMeans(c Case, pairs []roundPair) Case {
	var logs []float64
	var samples []string
	for i, p := range pairs {
		// Transactions are counted per second: a reading's step is one transaction. Only the
		// ratio and its interval are read (the goal judges the case), so the margin is the
		// default and no verdict of it is used.
		cmp := stats.Compare(stats.SeriesMean(p.base.Seconds, 1), stats.SeriesMean(p.tunnel.Seconds, 1), stats.DefaultMargin)
		logs, samples = append(logs, math.Log(cmp.Ratio)), append(samples, cmp.SamplesText())
		if i == 0 {
			c.Lo, c.Hi, c.Bounded, c.N = cmp.Lo, cmp.Hi, cmp.Bounded, min(cmp.A.N, cmp.B.N)
			continue
		}
		c.Lo, c.Hi, c.Bounded = min(c.Lo, cmp.Lo), max(c.Hi, cmp.Hi), c.Bounded && cmp.Bounded
		c.N = min(c.N, cmp.A.N, cmp.B.N)
	}
	c.Figure = math.Exp(stats.Mean(logs))
	c.Basis = "batch means of the per-second TPS, " + samples[0]
	if len(pairs) > 1 {
		c.Basis = fmt.Sprintf("batch means of each round's per-second TPS (%s): the span of the %d rounds' intervals, the geometric mean of their ratios",
			strings.Join(samples, "; "), len(pairs))
	}
	return c
}

func logRatios(pairs []roundPair) []float64 {
	out := make([]float64, len(pairs))
	for i, p := range pairs {
		out[i] = math.Log(p.tunnel.TPS / p.base.TPS)
	}
	return out
}

func haveSeconds(pairs []roundPair) bool {
	for _, p := range pairs {
		if len(p.base.Seconds) == 0 || len(p.tunnel.Seconds) == 0 {
			return false
		}
	}
	return true
}

// plural is "1 round", "3 rounds".
func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
