package report

import (
	"fmt"
	"github.com/wirelab/wirelab/internal/link"
	"math"

	"github.com/wirelab/wirelab/internal/result"
)

const (
	saturatedUtil     = 0.9 // a link this busy with a network verdict is the limit
	highConcurrency   = 16  // compression is judged from here up, as the post does
	noEffectTolerance = 0.02
)

// findings states, in the post's terms, what the numbers show, each sentence citing the
// cells it rests on.
func (s *bwStudy) findings() []string {
	var out []string
	if f := s.saturation(); f != "" {
		out = append(out, f)
	}
	for _, l := range s.links {
		if f := s.compression(l); f != "" {
			out = append(out, f)
		}
	}
	for _, l := range s.links {
		if f := s.tls(l); f != "" {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		out = append(out, "Not enough cells to compare: each finding needs a plain series and a variant measured at the same thread counts.")
	}
	return out
}

func (s *bwStudy) tpsAt(k bwKey, th int) (float64, bool) {
	c := s.g.at(k, th)
	if c.failed() {
		return 0, false
	}
	m, _ := c.tps()
	return m, true
}

// peak is the highest mean TPS of a series and its thread count.
func (s *bwStudy) peak(k bwKey) (tps float64, threads int) {
	for _, th := range s.g.threads {
		if m, ok := s.tpsAt(k, th); ok && m > tps {
			tps, threads = m, th
		}
	}
	return tps, threads
}

func (s *bwStudy) saturation() string {
	slow := s.links[0]
	k := bwKey{slow, plain}
	if slow == 0 || !s.has(k) {
		return ""
	}
	util := func(c *cell) float64 { return c.mean(func(p result.Point) float64 { return p.LinkUtilization }) }
	maxU, maxT := 0.0, 0
	for _, th := range s.g.threads {
		c := s.g.at(k, th)
		if c.failed() {
			continue
		}
		u := util(c)
		if u > maxU {
			maxU, maxT = u, th
		}
		if u < saturatedUtil || c.bottleneck() != "network" {
			continue
		}
		m, _ := c.tps()
		pk, pkT := s.peak(k)
		f := fmt.Sprintf("The %s link saturates at %s: utilisation %s, bottleneck network (N1, %s, %s: %s TPS). "+
			"From there TPS stays flat: the peak is %s at %s, %s the %d-thread value.",
			link.FormatRate(slow), threadsN(th), pct(u), k.label(), threadsN(th), num(m), num(pk), threadsN(pkT), ratio(pk, m), th)
		if w, wT := s.peakWire(k); w > 0 {
			f += fmt.Sprintf(" The wire peaked at %s MiB/s (%s Mbit/s, %s of %s) at %s.",
				num(w/mib), num(w*8/1e6), pct(w*8/float64(slow)), link.FormatRate(slow), threadsN(wT))
		}
		if len(s.links) > 1 {
			fast := bwKey{s.links[len(s.links)-1], plain}
			if fm, fT := s.peak(fast); fm > 0 {
				f += fmt.Sprintf(" The %s link reaches %s TPS at %s, %s the %s peak: the network was the bottleneck.",
					link.FormatRate(fast.rate), num(fm), threadsN(fT), ratio(fm, pk), link.FormatRate(slow))
			}
		}
		return f
	}
	return fmt.Sprintf("The %s link never saturated: its highest utilisation was %s at %d threads (bottleneck %s), below the %s that marks a full link.",
		link.FormatRate(slow), pct(maxU), maxT, orDash(s.g.at(k, maxT).bottleneck()), pct(saturatedUtil))
}

// peakWire is the highest per-point mean wire rate in either direction, in bytes/s.
func (s *bwStudy) peakWire(k bwKey) (float64, int) {
	best, bestT := 0.0, 0
	for _, th := range s.g.threads {
		c := s.g.at(k, th)
		if c.failed() {
			continue
		}
		w := c.mean(func(p result.Point) float64 { return math.Max(p.WireBytesPerSDown, p.WireBytesPerSUp) })
		if w > best {
			best, bestT = w, th
		}
	}
	return best, bestT
}

type ratioAt struct {
	threads int
	a, b, r float64
}

// ratios are variant ÷ plain at each thread count ≥ from where both were measured.
func (s *bwStudy) ratios(a, b bwKey, from int) []ratioAt {
	var out []ratioAt
	for _, th := range s.g.threads {
		if th < from {
			continue
		}
		ma, okA := s.tpsAt(a, th)
		mb, okB := s.tpsAt(b, th)
		if okA && okB && ma > 0 {
			out = append(out, ratioAt{th, ma, mb, mb / ma})
		}
	}
	return out
}

func extremes(rs []ratioAt) (lo, hi ratioAt) {
	lo, hi = rs[0], rs[0]
	for _, r := range rs[1:] {
		if r.r < lo.r {
			lo = r
		}
		if r.r > hi.r {
			hi = r
		}
	}
	return lo, hi
}

func (r ratioAt) cite() string {
	return fmt.Sprintf("%s: %s → %s, %.2f×", threadsN(r.threads), num(r.a), num(r.b), r.r)
}

func (s *bwStudy) compression(l int64) string {
	a, b := bwKey{l, plain}, bwKey{l, compressed}
	rs := s.ratios(a, b, highConcurrency)
	scope := fmt.Sprintf("at %d threads and more", highConcurrency)
	if len(rs) == 0 {
		rs, scope = s.ratios(a, b, 0), "at the thread counts measured"
	}
	if len(rs) == 0 {
		return ""
	}
	lo, hi := extremes(rs)
	cite := fmt.Sprintf("(N2 %s: worst %s; best %s)", link.FormatRate(l), lo.cite(), hi.cite())
	if len(rs) == 1 {
		cite = fmt.Sprintf("(N2 %s, %s)", link.FormatRate(l), lo.cite())
	}
	var f string
	switch {
	case lo.r > 1+noEffectTolerance:
		f = fmt.Sprintf("On the %s link compression helps %s: compression ÷ plain is %s %s.", link.FormatRate(l), scope, span(lo.r, hi.r), cite)
	case hi.r < 1-noEffectTolerance:
		f = fmt.Sprintf("On the %s link compression hurts %s: compression ÷ plain is only %s %s.", link.FormatRate(l), scope, span(lo.r, hi.r), cite)
	case lo.r >= 1-noEffectTolerance && hi.r <= 1+noEffectTolerance:
		f = fmt.Sprintf("On the %s link compression makes no difference %s (%s) %s.", link.FormatRate(l), scope, span(lo.r, hi.r), cite)
	default:
		f = fmt.Sprintf("On the %s link compression helps at some thread counts and hurts at others %s: %s %s.", link.FormatRate(l), scope, span(lo.r, hi.r), cite)
	}
	if bn := s.majorityBottleneck(b, highConcurrency); bn != "" {
		f += " With compression the bottleneck is " + bn
		if pb := s.majorityBottleneck(a, highConcurrency); pb != "" && pb != bn {
			f += " (plain: " + pb + ")"
		}
		f += "."
	}
	if low := s.ratios(a, b, 0); len(low) > 0 && low[0].threads < highConcurrency {
		f += fmt.Sprintf(" At %s it is %.2f× (%s → %s).", threadsN(low[0].threads), low[0].r, num(low[0].a), num(low[0].b))
	}
	return f
}

// majorityBottleneck is the most common verdict of a series from a thread count up.
func (s *bwStudy) majorityBottleneck(k bwKey, from int) string {
	count := map[string]int{}
	best := ""
	for _, th := range s.g.threads {
		if th < from {
			continue
		}
		if bn := s.g.at(k, th).bottleneck(); bn != "" {
			count[bn]++
			if count[bn] > count[best] {
				best = bn
			}
		}
	}
	return best
}

// cost phrases what a variant ÷ plain ratio costs: "9.5%", or "nothing (3.6% faster)"
// rather than a negative cost.
func cost(r float64) string {
	if r > 1 {
		return "nothing (" + pct(r-1) + " faster)"
	}
	return pct(1 - r)
}

func (s *bwStudy) tls(l int64) string {
	a, b := bwKey{l, plain}, bwKey{l, encrypted}
	rs := s.ratios(a, b, 0)
	if len(rs) == 0 {
		return ""
	}
	first, last := rs[0], rs[len(rs)-1]
	f := fmt.Sprintf("On the %s link TLS costs %s at %s (N3 %s, %s)", link.FormatRate(l), cost(first.r), threadsN(first.threads), link.FormatRate(l), first.cite())
	if last.threads != first.threads {
		f += fmt.Sprintf(" and %s at %s (%s; bottleneck %s)", cost(last.r), threadsN(last.threads), last.cite(), orDash(s.g.at(b, last.threads).bottleneck()))
	}
	f += "."
	pa, pat := s.peak(a)
	pb, pbt := s.peak(b)
	// Both flat against a full link is not "stops scaling": the TLS peak must be well short.
	if pbt > 0 && pbt < pat && pb < 0.9*pa {
		f += fmt.Sprintf(" TLS stops scaling after %d threads (peak %s TPS) while plain keeps scaling to %d threads (%s TPS).", pbt, num(pb), pat, num(pa))
	}
	return f
}
