package replication

import (
	"math"

	"github.com/wirelab/wirelab/internal/result"
)

// Search finds the highest sustainable load of one channel to a stated precision: a ladder
// (Start, Start×Factor, ...) climbs until a probe fails, or steps down from Start when the
// very first probe fails; then bisection narrows the bracket between the highest passing
// and the lowest failing load until it is within Precision of the passing end, and the
// passing end is probed a second time to confirm it. A failed confirmation makes that load
// the failing end and the search goes on below it. Loads are multiples of Step (sysbench's
// --rate is whole transactions per second). A passing probe the source could not deliver
// (CPU, not the link) ends the search: a higher target cannot measure the link either.
// MaxProbes bounds the whole search.
//
// The bracket is result.Bracket of the probes, the same computation the report and the
// headlines use on the recorded points.
//
// Use: for q, ok := s.Next(); ok; q, ok = s.Next() { s.Record(q, passed, limited) }.
type Search struct {
	Start, Factor float64
	Min, Max      float64 // loads outside [Min, Max] are never probed
	Precision     float64 // (first failing - limit) / limit at which the search confirms and stops
	Step          float64
	MaxProbes     int

	probes  []result.Probe
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
	lo, hi := result.Bracket(s.probes)
	var q float64
	switch {
	case hi == 0: // every probe passed: climb
		if lo >= s.Max {
			return s.stop()
		}
		q = math.Min(lo*s.Factor, s.Max)
	case lo == 0: // the first probes failed: step down
		q = hi / s.Factor
		if q < s.Min {
			return s.stop()
		}
	default:
		q = s.round((lo + hi) / 2)
		if (hi-lo)/lo <= s.Precision || q <= lo || q >= hi {
			if s.passes(lo) >= 2 {
				return s.stop()
			}
			q = lo // confirm the limit with a second run
		}
	}
	q = s.round(q)
	if q < s.Min {
		return s.stop()
	}
	return q, true
}

func (s *Search) passes(q float64) int {
	n := 0
	for _, p := range s.probes {
		if p.Load == q && p.OK {
			n++
		}
	}
	return n
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

// Record is the outcome of probing load q: passed (bounded lag and a matching checksum),
// and whether the source fell short of the target.
func (s *Search) Record(q float64, passed, limited bool) {
	s.probes = append(s.probes, result.Probe{Load: q, OK: passed})
	s.limited = s.limited || passed && limited
}

// Best is the highest sustainable load found (0 = none), FirstUnbounded the lowest failing
// one above it (0 = none), Limited whether the search stopped at the source's limit, and
// Confirmed whether Best passed twice.
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

// Confirmed is whether the limit passed twice.
func (s *Search) Confirmed() bool { return s.passes(s.Best()) >= 2 }
