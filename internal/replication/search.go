package replication

import "math"

// Search finds the highest sustainable load of one channel: a ladder (Start, Start×Factor,
// ...) climbs until a probe is unbounded, or steps down from Start when the very first
// probe is; then Bisect halvings narrow the bracket. Loads are multiples of Step (sysbench's
// --rate is whole transactions per second, so Step is the queries of one transaction).
// A probe the source could not deliver (achieved well under target: CPU, not the link)
// ends the climb, because a higher target cannot measure the link either.
//
// Use: for q, ok := s.Next(); ok; q, ok = s.Next() { s.Record(q, bounded, limited) }.
type Search struct {
	Start, Factor float64
	Min, Max      float64 // loads outside [Min, Max] are never probed
	Bisect        int
	Step          float64

	lo, hi   float64 // highest bounded, lowest unbounded; 0 = none yet
	last     float64
	tried    int
	bisected int
	done     bool
	limited  bool
}

// Next returns the next load to probe, or false when the search is over.
func (s *Search) Next() (float64, bool) {
	if s.done {
		return 0, false
	}
	var q float64
	switch {
	case s.tried == 0:
		q = s.Start
	case s.limited:
		return s.stop()
	case s.hi == 0: // still climbing
		q = s.last * s.Factor
		if q > s.Max {
			if s.last >= s.Max {
				return s.stop()
			}
			q = s.Max
		}
	case s.lo == 0: // the first probes were unbounded: step down
		q = s.hi / s.Factor
		if q < s.Min {
			return s.stop()
		}
	default:
		if s.bisected >= s.Bisect {
			return s.stop()
		}
		q = (s.lo + s.hi) / 2
		s.bisected++
	}
	q = s.round(q)
	if q == s.lo || q == s.hi || q < s.Min {
		return s.stop()
	}
	return q, true
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

// Record is the outcome of probing load q: bounded lag (and a matching checksum), and
// whether the source fell short of the target.
func (s *Search) Record(q float64, bounded, limited bool) {
	s.tried++
	s.last = q
	if bounded {
		s.lo = math.Max(s.lo, q)
		s.limited = s.limited || limited
		return
	}
	if s.hi == 0 || q < s.hi {
		s.hi = q
	}
}

// Best is the highest bounded load probed (0 = none), FirstUnbounded the lowest unbounded
// one (0 = none), and Limited whether the climb stopped at the source's limit.
func (s *Search) Best() float64           { return s.lo }
func (s *Search) FirstUnbounded() float64 { return s.hi }
func (s *Search) Limited() bool           { return s.limited }
