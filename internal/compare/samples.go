package compare

import "github.com/wirelab/wirelab/internal/result"

// Sample kinds: where a side's samples come from.
const (
	FromRepeats = "repeats" // each repeat's TPS: independent runs of the point
	FromSeconds = "seconds" // one run's per-second TPS after warm-up: autocorrelated
	FromPoint   = "point"   // the point's TPS alone (no per-second series in the file)
)

// group is a run's points of one key and series: the repeats of one point.
type group struct {
	key    Key
	series string
	points []result.Point
}

// groupsOf groups a run's points by key and series, in the order they first appear.
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
	return out
}

// Samples are one side of a row: what the test compares.
type Samples struct {
	Values []float64 `json:"values"`
	Kind   string    `json:"kind"` // FromRepeats, FromSeconds or FromPoint
	Failed int       `json:"failed,omitempty"`
}

// samplesOf takes the TPS of each repeat that did not fail when the point was repeated,
// else the per-second TPS of its measured seconds (warm-up and the tail after the
// duration left out, as the point's own mean leaves them out), else its TPS alone.
func samplesOf(pts []result.Point) Samples {
	var ok []result.Point
	s := Samples{}
	for _, p := range pts {
		if p.Failed {
			s.Failed++
			continue
		}
		ok = append(ok, p)
	}
	switch {
	case len(ok) == 0:
		return s
	case len(ok) > 1:
		s.Kind = FromRepeats
		for _, p := range ok {
			s.Values = append(s.Values, p.TPS)
		}
		return s
	}
	p := ok[0]
	if s.Values = p.MeasuredTPS(); len(s.Values) > 0 {
		s.Kind = FromSeconds
		return s
	}
	s.Kind, s.Values = FromPoint, []float64{p.TPS}
	return s
}
