package compare

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

// The test's fixed terms, benchstat's.
const (
	Alpha      = 0.05 // significance level of the Mann-Whitney U test
	MinSamples = 4    // samples a side needed to call a difference
	confidence = 0.95 // level of the intervals
)

// DefaultMargin is the change a difference must exceed to be called where no margin was
// measured or recorded (stats.DefaultMargin): per-second samples, being autocorrelated,
// make small differences look significant. The CLI passes the run's own margin.
const DefaultMargin = float64(stats.DefaultMargin)

// Input is one result directory: its name as given and its run.
type Input struct {
	Name string
	Run  *result.Run
}

// Comparison is every matched point of the runs side by side; the first run is the base
// every other is compared with.
type Comparison struct {
	Metric     string    `json:"metric"` // "tps"
	Alpha      float64   `json:"alpha"`
	Margin     float64   `json:"margin"`
	MinSamples int       `json:"min_samples"`
	Runs       []RunInfo `json:"runs"`
	Rows       []Row     `json:"rows"`
	Geomean    Geomean   `json:"geomean"`
}

// RunInfo names a run.
type RunInfo struct {
	Name    string    `json:"name"`
	Study   string    `json:"study"`
	Started time.Time `json:"started"`
}

// Row is one point across the runs.
type Row struct {
	Key     Key      `json:"key"`
	Sides   []Side   `json:"sides"`   // one per run, the base first
	Changes []Change `json:"changes"` // one per run after the base, against the base
}

// Side is one run's figure for the point: the median of its samples and the median's
// 95% interval where there are enough samples for one.
type Side struct {
	Series   string    `json:"series"`
	Median   float64   `json:"median"`
	MedianCI *Interval `json:"median_ci,omitempty"`
	Samples  Samples   `json:"samples"`
}

// Interval is a 95% confidence interval.
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Change is a run's point against the base's.
type Change struct {
	Ratio float64 `json:"ratio"` // this median ÷ the base's; 0 when a side has none
	// RatioCI is the ratio's 95% interval (Hodges-Lehmann on log TPS); nil when the
	// samples are too few for one.
	RatioCI     *Interval `json:"ratio_ci,omitempty"`
	P           float64   `json:"p,omitempty"` // Mann-Whitney U, two-sided; 0 = not tested
	Significant bool      `json:"significant"`
	// Reason says why a change is not called ("~"): too few samples, not significant, or
	// within the margin.
	Reason string `json:"reason,omitempty"`
}

// Geomean is the geometric mean over the rows every run has a median for: of each run's
// medians and of each change's ratio.
type Geomean struct {
	Rows    int       `json:"rows"`
	Medians []float64 `json:"medians"`
	Ratios  []float64 `json:"ratios"`
}

// ErrBadMargin means the margin is not a fraction in [0, 1).
var ErrBadMargin = errors.New("margin out of range")

// Compare matches the runs' points and tests every run after the first against it.
func Compare(in []Input, margin float64) (*Comparison, error) {
	if len(in) < 2 {
		return nil, fmt.Errorf("compare: want at least two runs, got %d", len(in))
	}
	if margin < 0 || margin >= 1 || math.IsNaN(margin) {
		return nil, fmt.Errorf("compare: %w: %g", ErrBadMargin, margin)
	}
	base := groupsOf(in[0].Run)
	cols := [][]*group{base}
	for _, o := range in[1:] {
		m, err := pair(in[0].Name, base, o.Name, groupsOf(o.Run))
		if err != nil {
			return nil, fmt.Errorf("compare: %w", err)
		}
		cols = append(cols, m)
	}
	c := &Comparison{Metric: "tps", Alpha: Alpha, Margin: margin, MinSamples: MinSamples}
	for _, x := range in {
		c.Runs = append(c.Runs, RunInfo{Name: x.Name, Study: x.Run.Study, Started: x.Run.Started})
	}
	for i, g := range base {
		row := Row{Key: g.key}
		for _, col := range cols {
			row.Sides = append(row.Sides, sideOf(col[i]))
		}
		for _, s := range row.Sides[1:] {
			row.Changes = append(row.Changes, decide(row.Sides[0].Samples, s.Samples, margin))
		}
		c.Rows = append(c.Rows, row)
	}
	c.Geomean = geomean(c.Rows, len(in))
	return c, nil
}

func sideOf(g *group) Side {
	s := Side{Series: g.series, Samples: samplesOf(g.points)}
	s.Median = stats.Median(s.Samples.Values)
	if lo, hi, ok := stats.MedianCI(s.Samples.Values, confidence); ok {
		s.MedianCI = &Interval{Lo: lo, Hi: hi}
	}
	return s
}

// decide tests b against the base a: the change is called when both sides have
// MinSamples, the Mann-Whitney p is below Alpha and the ratio of medians is further
// from 1 than margin.
func decide(a, b Samples, margin float64) Change {
	ma, mb := stats.Median(a.Values), stats.Median(b.Values)
	var c Change
	if ma > 0 && mb > 0 {
		c.Ratio = mb / ma
	}
	if len(a.Values) < MinSamples || len(b.Values) < MinSamples {
		c.Reason = fmt.Sprintf("need >= %d samples a side to call a difference, have %d+%d",
			MinSamples, len(a.Values), len(b.Values))
		return c
	}
	if la, lb, ok := logs(a.Values), logs(b.Values), c.Ratio > 0; ok && la != nil && lb != nil {
		if s := stats.ShiftCI(la, lb, confidence); s.OK {
			c.RatioCI = &Interval{Lo: math.Exp(s.Lo), Hi: math.Exp(s.Hi)}
		}
	}
	mw, err := stats.MannWhitneyU(a.Values, b.Values)
	if err != nil {
		c.Reason = err.Error()
		return c
	}
	c.P = mw.P
	switch {
	case mw.P >= Alpha:
		c.Reason = fmt.Sprintf("not significant: p = %.3f >= %g", mw.P, Alpha)
	case math.Abs(c.Ratio-1) <= margin:
		c.Reason = fmt.Sprintf("significant (p = %.3f) but within the ±%g%% margin", mw.P, margin*100)
	default:
		c.Significant = true
	}
	return c
}

// logs is the natural log of every value; nil when one is not positive (a second without
// a transaction), where a ratio interval means nothing.
func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		if x <= 0 {
			return nil
		}
		out[i] = math.Log(x)
	}
	return out
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
