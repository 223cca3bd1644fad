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
	MinSamples = 4    // units a side needed to call a difference
	confidence = 0.95 // level of the intervals
)

// DefaultMargin is the change a difference must exceed to be called when no other margin
// is given: the run-to-run spread of a lab point (a link-bound point repeats within about
// 1-5% across runs). Batch means of one run are tight, so a test on them finds a 1%
// difference between two runs of one build significant: the margin is what keeps it "~".
const DefaultMargin = 0.05

// Margin is the smallest change called, with where it came from ("--margin", a measured
// spread), which the legend prints.
type Margin struct {
	Value float64
	From  string
}

// Input is one result directory: its name as given and its run.
type Input struct {
	Name string
	Run  *result.Run
}

// Comparison is every matched point of the runs side by side, one table per metric; the
// first run is the base every other is compared with.
type Comparison struct {
	Alpha      float64   `json:"alpha"`
	Margin     float64   `json:"margin"`
	MarginFrom string    `json:"margin_from,omitempty"`
	MinSamples int       `json:"min_samples"`
	Runs       []RunInfo `json:"runs"`
	Tables     []Table   `json:"tables"`
}

// RunInfo names a run.
type RunInfo struct {
	Name    string    `json:"name"`
	Study   string    `json:"study"`
	Started time.Time `json:"started"`
}

// Table is one metric's rows. A metric no side of any row has is left out.
type Table struct {
	Metric        string  `json:"metric"` // "tps", "lat_p50_ms", "lat_p95_ms", "lat_p99_ms"
	Title         string  `json:"title"`
	LowerIsBetter bool    `json:"lower_is_better,omitempty"`
	Rows          []Row   `json:"rows"`
	Geomean       Geomean `json:"geomean"`
}

// Row is one point across the runs.
type Row struct {
	Key     Key      `json:"key"`
	Sides   []Side   `json:"sides"`   // one per run, the base first
	Changes []Change `json:"changes"` // one per run after the base, against the base
}

// Side is one run's figure for the point: its units' values, their median and the
// median's 95% interval where there are enough units for one.
type Side struct {
	Series   string    `json:"series"`
	Unit     Unit      `json:"unit"`
	Values   []float64 `json:"values,omitempty"`
	Missing  string    `json:"missing,omitempty"` // why there are no values
	Median   float64   `json:"median"`
	MedianCI *Interval `json:"median_ci,omitempty"`
}

// Interval is a 95% confidence interval.
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// ErrBadMargin means the margin is not a fraction in [0, 1).
var ErrBadMargin = errors.New("margin out of range")

// Compare matches the runs' points and tests every run after the first against it, in the
// units both sides of a row share (refused, ErrMixedUnits, when they share none).
func Compare(in []Input, margin Margin) (*Comparison, error) {
	if len(in) < 2 {
		return nil, fmt.Errorf("compare: want at least two runs, got %d", len(in))
	}
	if m := margin.Value; m < 0 || m >= 1 || math.IsNaN(m) {
		return nil, fmt.Errorf("compare: %w: %g", ErrBadMargin, m)
	}
	names := make([]string, len(in))
	for i, x := range in {
		names[i] = x.Name
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
	rows := make([][]*group, len(base))
	units := make([][]Unit, len(base))
	var problems []string
	for i := range base {
		for _, col := range cols {
			rows[i] = append(rows[i], col[i])
		}
		var p string
		if units[i], p = rowUnits(names, rows[i]); p != "" {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("compare: %w", refusal(ErrMixedUnits, names, problems))
	}
	c := &Comparison{Alpha: Alpha, Margin: margin.Value, MarginFrom: margin.From, MinSamples: MinSamples}
	for _, x := range in {
		c.Runs = append(c.Runs, RunInfo{Name: x.Name, Study: x.Run.Study, Started: x.Run.Started})
	}
	for _, m := range metrics {
		if t, ok := table(m, rows, units, len(in), margin.Value); ok {
			c.Tables = append(c.Tables, t)
		}
	}
	return c, nil
}

// table is metric m over the rows (each a point's group in every run, with the units they
// are compared in); false when no side of any row has it.
func table(m metric, rows [][]*group, units [][]Unit, runs int, margin float64) (Table, bool) {
	t := Table{Metric: m.name, Title: m.title, LowerIsBetter: m.lowerIsBetter}
	any := false
	for i, gs := range rows {
		row := Row{Key: gs[0].key}
		for j, g := range gs {
			s := sideOf(m, g, units[i][j])
			any = any || len(s.Values) > 0
			row.Sides = append(row.Sides, s)
		}
		for _, s := range row.Sides[1:] {
			row.Changes = append(row.Changes, decide(row.Sides[0].Values, s.Values, margin, m.lowerIsBetter))
		}
		t.Rows = append(t.Rows, row)
	}
	t.Geomean = geomean(t.Rows, runs)
	return t, any
}

func sideOf(m metric, g *group, u Unit) Side {
	s := Side{Series: g.series, Unit: u}
	s.Values, s.Missing = m.values(g, u)
	s.Median = stats.Median(s.Values)
	if lo, hi, ok := stats.MedianCI(s.Values, confidence); ok {
		s.MedianCI = &Interval{Lo: lo, Hi: hi}
	}
	return s
}
