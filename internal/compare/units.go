package compare

import (
	"errors"
	"fmt"

	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

// UnitKind is what a side's independent samples are. Seconds of one run are never a
// unit: consecutive seconds are correlated, and a test that counts them as independent
// overstates the evidence.
type UnitKind string

const (
	// Repeats are runs of the point (run --repeat N), one value each. A point run once
	// without a per-second series (an older file) is one repeat: its mean alone.
	Repeats UnitKind = "repeats"
	// Batches are one run's measured seconds cut into the batch means the report's
	// intervals use (stats.BatchMeans): close to independent where seconds are not.
	Batches UnitKind = "batches"
)

// Unit is what a side's samples are and how many there are.
type Unit struct {
	Kind   UnitKind `json:"kind"`
	N      int      `json:"n"`                 // repeats that did not fail, or batches
	BatchS int      `json:"batch_s,omitempty"` // seconds per batch (Batches)
	Points int      `json:"points"`            // points run, failed ones included
	Failed int      `json:"failed,omitempty"`
}

// String names the unit as every line prints it: "5 repeats", "1 run", "one run's 10
// batches of 6 s".
func (u Unit) String() string {
	switch {
	case u.Kind == Batches:
		return fmt.Sprintf("one run's %d %s of %d s", u.N, plural(u.N, "batch", "batches"), u.BatchS)
	case u.Points == 1:
		return "1 run"
	}
	return fmt.Sprintf("%d %s", u.N, plural(u.N, "repeat", "repeats"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// group is a run's points of one key and series: the repeats of one point.
type group struct {
	key    Key
	series string
	points []result.Point
	ok     []result.Point // the points that did not fail
	unit   Unit
}

// groupsOf groups a run's points by key and series, in the order they first appear, and
// gives each group its unit.
func groupsOf(r *result.Run) []*group {
	var out []*group
	at := map[string]*group{}
	for _, p := range r.Points {
		k := keyOf(r, p)
		id := p.Series + "\x00" + describe(p.Series, k)
		g := at[id]
		if g == nil {
			g = &group{key: k, series: p.Series}
			at[id] = g
			out = append(out, g)
		}
		g.points = append(g.points, p)
	}
	for _, g := range out {
		g.setUnit()
	}
	return out
}

// setUnit finds the group's unit: the repeats that did not fail when the point ran more
// than once (however many failed), else one run's batch means, else (no per-second
// series, or under two seconds of it) the run's own figure as one repeat.
func (g *group) setUnit() {
	g.unit = Unit{Kind: Repeats, Points: len(g.points)}
	for _, p := range g.points {
		if p.Failed {
			g.unit.Failed++
			continue
		}
		g.ok = append(g.ok, p)
	}
	g.unit.N = len(g.ok)
	if len(g.points) != 1 || len(g.ok) != 1 {
		return
	}
	if m, b := stats.BatchMeans(g.ok[0].MeasuredTPS()); len(m) > 0 {
		g.unit = Unit{Kind: Batches, N: len(m), BatchS: b, Points: 1}
	}
}

// asRun is u read as one run: a run's batches become its point's own figure.
func asRun(u Unit) Unit {
	if u.Kind == Batches {
		return Unit{Kind: Repeats, N: 1, Points: 1}
	}
	return u
}

// ErrMixedUnits means one side of a row counts repeats and another one run's batch
// means: two kinds of sample that a test cannot set against each other.
var ErrMixedUnits = errors.New("units do not match")

// rowUnits are the units every side of a row is compared in; problem says why there are
// none. Repeats against batches is refused. A point run once without a per-second series
// (an older file) against one run's batches reads both as what they share, one run each:
// its figure alone, never tested.
func rowUnits(names []string, gs []*group) (units []Unit, problem string) {
	units = make([]Unit, len(gs))
	rep, bat, single := -1, -1, false
	for i, g := range gs {
		units[i] = g.unit
		switch {
		case g.unit.Kind == Batches && bat < 0:
			bat = i
		case g.unit.Kind == Repeats && g.unit.Points > 1 && rep < 0:
			rep = i
		case g.unit.Kind == Repeats && g.unit.Points == 1:
			single = true
		}
	}
	switch {
	case rep >= 0 && bat >= 0:
		first, second := min(rep, bat), max(rep, bat)
		return nil, fmt.Sprintf("%s: %s has %s, %s has %s: compare like with like: run both with --repeat, or both once",
			"point "+describe(gs[0].series, gs[0].key), names[first], unitOfPoint(units[first]), names[second], unitOfPoint(units[second]))
	case bat >= 0 && single:
		for i := range units {
			units[i] = asRun(units[i])
		}
	}
	return units, ""
}

// unitOfPoint is the unit as a refusal names it: "5 repeats", "one run's 10 batch means
// of 6 s".
func unitOfPoint(u Unit) string {
	if u.Kind == Batches {
		return fmt.Sprintf("one run's %d batch %s of %d s", u.N, plural(u.N, "mean", "means"), u.BatchS)
	}
	return u.String()
}
