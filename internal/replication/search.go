package replication

import (
	"math"

	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

// Search finds the highest sustainable load of one channel, with its interval. Near the
// limit a probe's outcome is noisy (a load that passes once can fail the next time), so no
// single probe decides: every probe feeds one fit of pass probability against load
// (result.FitLimit), whose 50% point is the limit.
//
// First a ladder (Start, Start×Factor, ...) climbs until a probe fails, or steps down from
// Start while probes fail, until a probe has failed above a passing one. From then on each
// probe goes to the fit's current estimate, where an outcome says the most about it, and
// probes there repeat as the estimate settles; the search stops once the 95% interval is
// within ±Precision of the estimate. Loads are multiples of Step (sysbench's --rate is
// whole transactions per second). A passing probe the source could not deliver (CPU, not
// the link) ends the search: a higher target cannot measure the link either. MaxProbes
// bounds the whole search.
//
// The fit charges each outcome to the load the probe delivered (result.Probe.Delivered);
// the ladder and the bracket go by the targets probed.
//
// Use: for q, ok := s.Next(); ok; q, ok = s.Next() { s.Record(q, delivered, passed, limited) }.
type Search struct {
	Start, Factor float64
	Min, Max      float64 // loads outside [Min, Max] are never probed
	Precision     float64 // the interval's half-width, relative to the limit, at which the search stops
	Step          float64
	MaxProbes     int
	EdgeProbes    int // the most probes after the first failure above a pass (0 = no bound but MaxProbes)

	probes  []result.Probe
	edge    int // probes placed by the fit
	limited bool
	done    bool
}

// Next returns the next load to probe, or false when the search is over.
func (s *Search) Next() (float64, bool) {
	if s.done || s.limited || (s.MaxProbes > 0 && len(s.probes) >= s.MaxProbes) {
		return s.stop()
	}
	if len(s.probes) == 0 {
		return s.round(s.Start), true
	}
	var q float64
	if f := s.Limit(); f.OK {
		if (f.Hi-f.Lo)/2 <= s.Precision*f.Est || s.EdgeProbes > 0 && s.edge >= s.EdgeProbes {
			return s.stop()
		}
		s.edge++
		q = math.Min(f.Est, s.Max)
	} else if low := s.lowestFail(); low > 0 { // nothing passed below a failure yet: step down
		q = low / s.Factor
	} else { // every probe passed: climb
		high := s.Best()
		if high >= s.Max {
			return s.stop()
		}
		q = math.Min(high*s.Factor, s.Max)
	}
	q = s.round(q)
	if q < s.Min {
		return s.stop()
	}
	return q, true
}

func (s *Search) lowestFail() float64 {
	low := 0.0
	for _, p := range s.probes {
		if !p.OK && (low == 0 || p.Load < low) {
			low = p.Load
		}
	}
	return low
}

func (s *Search) stop() (float64, bool) {
	s.done = true
	return 0, false
}

func (s *Search) round(q float64) float64 {
	if s.Step <= 0 {
		return q
	}
	return math.Max(s.Step, math.Round(q/s.Step)*s.Step)
}

// Record is the outcome of probing load q: the load the source delivered (0 = not known),
// passed (bounded lag and a matching checksum), and whether the source fell short of the
// target.
func (s *Search) Record(q, delivered float64, passed, limited bool) {
	s.probes = append(s.probes, result.Probe{Load: q, Delivered: delivered, OK: passed})
	s.limited = s.limited || passed && limited
}

// Limit is the fitted limit and its 95% interval (not OK until a probe failed above a
// passing one).
func (s *Search) Limit() stats.Threshold { return result.FitLimit(s.probes) }

// Best is the highest load that passed every time and lies below every failing load (0 =
// none): the limit when the search never found a failing load.
func (s *Search) Best() float64 {
	lo, _ := result.Bracket(s.probes)
	return lo
}

// FirstUnbounded is the lowest failing load (0 = none).
func (s *Search) FirstUnbounded() float64 {
	_, hi := result.Bracket(s.probes)
	return hi
}

// Limited is whether the search stopped at the source's limit.
func (s *Search) Limited() bool { return s.limited }
