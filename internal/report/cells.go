package report

import (
	"fmt"
	"sort"

	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

// cell is every repeat of one (series, threads) measurement. Failed repeats are kept for
// the record but left out of the numbers. margin is the run's, which its comparisons are
// read within.
type cell struct {
	all, ok []result.Point
	margin  stats.Margin
}

func (c *cell) add(p result.Point) {
	c.all = append(c.all, p)
	if !p.Failed {
		c.ok = append(c.ok, p)
	}
}

// failed reports whether no repeat of the cell succeeded.
func (c *cell) failed() bool { return c == nil || len(c.ok) == 0 }

// mean of f over the successful repeats.
func (c *cell) mean(f func(result.Point) float64) float64 {
	if c.failed() {
		return 0
	}
	xs := make([]float64, len(c.ok))
	for i, p := range c.ok {
		xs[i] = f(p)
	}
	return stats.Mean(xs)
}

// tps is the mean TPS and its 95% CI half-width (see tpsEstimate).
func (c *cell) tps() (m, half float64) {
	e := c.tpsEstimate()
	return e.Mean, e.Half95()
}

// tpsEstimate is the cell's mean TPS with its spread, the one estimate every ratio of the
// report is built from: over the repeats when two or more succeeded (Student's t), else
// over the steady (after warm-up) per-second TPS of its one point by batch means. The
// point's TPS is the mean of those same seconds; it is kept as the mean so that findings
// quote the figure the tables show. A point without a per-second series is one mean.
func (c *cell) tpsEstimate() stats.Estimate {
	if c.failed() {
		return stats.Estimate{}
	}
	if len(c.ok) > 1 {
		xs := make([]float64, len(c.ok))
		for i, p := range c.ok {
			xs[i] = p.TPS
		}
		return stats.MeanOf(xs)
	}
	p := c.ok[0]
	xs := p.MeasuredTPS()
	if len(xs) == 0 {
		return stats.Single(p.TPS)
	}
	e := stats.SeriesMean(xs, 1) // whole transactions each second
	e.Mean = p.TPS
	return e
}

// tpsRatio is b's TPS ÷ a's, compared within the run's margin; false when either cell has
// no successful point or a's TPS is zero.
func tpsRatio(a, b *cell) (comparison, bool) {
	if a.failed() || b.failed() {
		return comparison{}, false
	}
	ea := a.tpsEstimate()
	if ea.Mean == 0 {
		return comparison{}, false
	}
	return comparison{stats.Compare(ea, b.tpsEstimate(), a.margin), "TPS", a.ok[0].DurationS, true}, true
}

// bottleneck is the verdict most repeats agree on (ties: the first seen).
func (c *cell) bottleneck() string {
	if c.failed() {
		return ""
	}
	count := map[string]int{}
	best := ""
	for _, p := range c.ok {
		count[p.Bottleneck]++
		if count[p.Bottleneck] > count[best] {
			best = p.Bottleneck
		}
	}
	return best
}

// flagged reports whether a repeat of the cell ran on a wire that failed its check.
func (c *cell) flagged() bool {
	if c == nil {
		return false
	}
	for _, p := range c.all {
		if checkFlag(p) != "" {
			return true
		}
	}
	return false
}

// tpsText is the TPS of a cell as tables show it: "2867", "2867 ± 15" with repeats,
// "FAILED" when nothing succeeded, "–" when never measured; ⚠ marks a bad wire check.
func (c *cell) tpsText() string {
	if c == nil {
		return "–"
	}
	if c.failed() {
		return "FAILED"
	}
	m, half := c.tps()
	s := num(m)
	if len(c.ok) > 1 {
		s += " ± " + numLike(half, m)
	}
	if len(c.ok) < len(c.all) {
		s += fmt.Sprintf(" (%d/%d ok)", len(c.ok), len(c.all))
	}
	if c.flagged() {
		s += " ⚠"
	}
	return s
}

// tpsCell is tpsText with the bottleneck: "2867 (network)".
func (c *cell) tpsCell() string {
	s := c.tpsText()
	if b := c.bottleneck(); b != "" {
		s += " (" + b + ")"
	}
	return s
}

// grid is cells by series key and thread count.
type grid[K comparable] struct {
	cells   map[K]map[int]*cell
	threads []int
}

// newGrid groups pts by key and thread count, each cell's comparisons to be read within
// margin m.
func newGrid[K comparable](pts []result.Point, key func(result.Point) K, m stats.Margin) *grid[K] {
	g := &grid[K]{cells: map[K]map[int]*cell{}}
	seen := map[int]bool{}
	for _, p := range pts {
		k := key(p)
		if g.cells[k] == nil {
			g.cells[k] = map[int]*cell{}
		}
		c := g.cells[k][p.Threads]
		if c == nil {
			c = &cell{margin: m}
			g.cells[k][p.Threads] = c
		}
		c.add(p)
		if !seen[p.Threads] {
			seen[p.Threads] = true
			g.threads = append(g.threads, p.Threads)
		}
	}
	sort.Ints(g.threads)
	return g
}

func (g *grid[K]) at(k K, threads int) *cell { return g.cells[k][threads] }

// estimates are the TPS estimates of every cell that has one, for saying what the
// intervals rest on.
func (g *grid[K]) estimates() []stats.Estimate {
	var out []stats.Estimate
	for _, row := range g.cells {
		for _, c := range row {
			if !c.failed() {
				out = append(out, c.tpsEstimate())
			}
		}
	}
	return out
}

// line is the (threads, mean TPS) points of one series, skipping failed cells.
func (g *grid[K]) line(k K) []xy {
	var out []xy
	for _, t := range g.threads {
		if c := g.at(k, t); !c.failed() {
			m, _ := c.tps()
			out = append(out, xy{float64(t), m})
		}
	}
	return out
}
