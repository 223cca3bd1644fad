package study

import (
	"context"
	"fmt"
	"strings"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// A point is measured only on the wire asked, in the lab and on real hosts alike: the
// Session reads every shaped link back (Backend.ReadShaping) before the point, shaping
// it again if it was changed since, and after it, and shapingFault judges the two
// readings with the one rule below. A point that fails it is kept as failed, with the
// reason naming each link.

// shapingFault is the rule. Between the readings before and after a point every shaped
// link must still have everything its plan made, its shaped classes must not have been
// missing (a sample agent's reads) or made anew (their byte counters never go back), and
// a link whose host drove transactions (drove: TPS by lab role, from the point's load
// drivers) must have had its shaped classes count bytes. It returns "" for a point
// measured on the wire asked, else a clause per link that was not, naming the link, what
// happened to it and the transactions that were not measured on c: those its host ran,
// else the point's (tps).
func shapingFault(before, after []link.Reading, drove map[string]float64, tps float64, c link.Condition) string {
	var out []string
	for _, a := range after {
		b, ok := readingOf(before, a.Link)
		if !ok {
			b = link.Reading{Bytes: a.Bytes, Gone: a.Gone}
		}
		notOn := fmt.Sprintf("the point's %.0f TPS were not measured on the link asked (%s)", tps, c)
		if moved := drove[a.Host]; moved > 0 {
			notOn = fmt.Sprintf("the %.0f TPS it ran were not measured on the link asked (%s)", moved, c)
		}
		switch {
		case len(a.Problems) > 0:
			out = append(out, fmt.Sprintf("%s: %s; %s", a.Link, strings.Join(a.Problems, ", "), notOn))
		case a.Gone > b.Gone:
			out = append(out, fmt.Sprintf("%s: its sample agent found its shaped classes missing in %d reads during the point; %s", a.Link, a.Gone-b.Gone, notOn))
		case a.Bytes < b.Bytes:
			out = append(out, fmt.Sprintf("%s: its shaped classes were made anew during the point (their counters went back from %d to %d bytes); %s", a.Link, b.Bytes, a.Bytes, notOn))
		case a.Classes > 0 && drove[a.Host] > 0 && a.Bytes == b.Bytes:
			out = append(out, fmt.Sprintf("%s: its shaped classes counted no byte while it ran %.0f TPS: the traffic went around the link asked (%s)", a.Link, drove[a.Host], c))
		}
	}
	return strings.Join(out, "; ")
}

// readingOf is the reading of the link named name among rs.
func readingOf(rs []link.Reading, name string) (link.Reading, bool) {
	for _, r := range rs {
		if r.Link == name {
			return r, true
		}
	}
	return link.Reading{}, false
}

// problemsOf says what is not as shaped in rs, by link; "" when every link is.
func problemsOf(rs []link.Reading) string {
	var out []string
	for _, r := range rs {
		if len(r.Problems) > 0 {
			out = append(out, r.Link+": "+strings.Join(r.Problems, ", "))
		}
	}
	return strings.Join(out, "; ")
}

// wireBefore reads the wire back before point k. A wire not as shaped (changed since the
// last point by someone else's tc, a switch that fired) is said in the run's notes and
// shaped again, then read again: the point starts only on the wire asked, and a wire
// that cannot be kept so ends the run with an error naming the links.
func (e *Env) wireBefore(ctx context.Context, k int) ([]link.Reading, error) {
	rs, err := e.Backend.ReadShaping(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the wire back before point %d: %w", k, err)
	}
	p := problemsOf(rs)
	if p == "" {
		return rs, nil
	}
	e.Logger.Warn("the wire is not as shaped: shaping it again", "point", k, "problems", p)
	e.Note("Before point %d the wire was not as shaped (%s): wirelab shaped it again (%s) before measuring it.", k, p, e.Cond)
	if err := e.Backend.Shape(ctx, e.Cond); err != nil {
		return nil, fmt.Errorf("shape the wire again before point %d: %w", k, err)
	}
	e.Run.Environment.LinkAsReadBack = e.Backend.Wire().ReadBack
	if rs, err = e.Backend.ReadShaping(ctx); err != nil {
		return nil, fmt.Errorf("read the wire back before point %d: %w", k, err)
	}
	if p := problemsOf(rs); p != "" {
		return nil, fmt.Errorf("before point %d the wire is not as shaped even after shaping it again (%s): %s", k, e.Cond, p)
	}
	return rs, nil
}

// wireAfter judges the point p measured since the wire read before (shapingFault) and, if
// it was not measured on the wire asked, fails it with the reason.
func (e *Env) wireAfter(ctx context.Context, before []link.Reading, p *result.Point) {
	after, err := e.Backend.ReadShaping(ctx)
	fault := ""
	if err != nil {
		fault = fmt.Sprintf("the wire could not be read back after the point (%v): the point's %.0f TPS are not known to be measured on the link asked (%s)", err, p.TPS, e.Cond)
	} else {
		fault = shapingFault(before, after, e.drove, p.TPS, e.Cond)
	}
	if fault == "" {
		return
	}
	e.Logger.Warn("point not measured on the wire asked", "reason", fault)
	p.Failed = true
	if p.FailReason != "" {
		fault = p.FailReason + "; " + fault
	}
	p.FailReason = fault
}
