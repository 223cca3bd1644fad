package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

const saturatedUtil = 0.9 // a link this busy with a network verdict is the limit

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
		_, pkT := s.peak(k)
		f := fmt.Sprintf("The %s link saturates at %s: utilisation %s, bottleneck network (N1, %s, %s: %s TPS). %s",
			link.FormatRate(slow), threadsN(th), pct(u), k.label(), threadsN(th), num(m), s.afterSaturation(k, th, pkT))
		if w, wT := s.peakWire(k); w > 0 {
			f += fmt.Sprintf(" The wire peaked at %s MiB/s (%s Mbit/s, %s of %s) at %s.",
				num(w/mib), num(w*8/1e6), pct(w*8/float64(slow)), link.FormatRate(slow), threadsN(wT))
		}
		if len(s.links) > 1 {
			fast := bwKey{s.links[len(s.links)-1], plain}
			if fm, fT := s.peak(fast); fm > 0 {
				f += fmt.Sprintf(" The %s link reaches %s TPS at %s, %s the %s peak",
					link.FormatRate(fast.rate), num(fm), threadsN(fT), ratioOf(s.g.at(k, pkT), s.g.at(fast, fT)), link.FormatRate(slow))
				if ci, ok := tpsRatio(s.g.at(k, pkT), s.g.at(fast, fT)); ok && ci.Verdict == stats.Higher {
					f += ": the network was the bottleneck"
				}
				f += "."
			}
		}
		return f
	}
	return fmt.Sprintf("The %s link never saturated: its highest utilisation was %s at %d threads (bottleneck %s), below the %s that marks a full link.",
		link.FormatRate(slow), pct(maxU), maxT, orDash(s.g.at(k, maxT).bottleneck()), pct(saturatedUtil))
}

// afterSaturation says what TPS does from the thread count th where the link filled up
// to the series' peak at pkT, judged on their ratio: "From there TPS stays flat: …".
func (s *bwStudy) afterSaturation(k bwKey, th, pkT int) string {
	c, pk := s.g.at(k, th), s.g.at(k, pkT)
	cite := fmt.Sprintf("the peak is %s at %s, %s the %d-thread value", num(s.must(k, pkT)), threadsN(pkT), ratioOf(c, pk), th)
	ci, ok := tpsRatio(c, pk)
	switch {
	case pkT == th:
		return "It peaks there."
	case !ok:
		return ""
	case ci.Verdict == stats.NoDifference:
		return "From there TPS stays flat: " + cite + "."
	case ci.Verdict == stats.Higher:
		return "From there TPS still rises: " + cite + "."
	}
	return "Whether TPS stays flat from there is " + tooShort + ": " + cite + "."
}

// must is the mean TPS of a cell known to have one.
func (s *bwStudy) must(k bwKey, th int) float64 {
	m, _ := s.tpsAt(k, th)
	return m
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

// ratioAt is variant ÷ plain at one thread count, with both means and the interval.
type ratioAt struct {
	threads int
	a, b    float64
	ci      comparison
}

// ratios are variant ÷ plain at each thread count where both were measured.
func (s *bwStudy) ratios(a, b bwKey) []ratioAt {
	var out []ratioAt
	for _, th := range s.g.threads {
		ca, cb := s.g.at(a, th), s.g.at(b, th)
		if ci, ok := tpsRatio(ca, cb); ok {
			ma, _ := ca.tps()
			mb, _ := cb.tps()
			out = append(out, ratioAt{th, ma, mb, ci})
		}
	}
	return out
}

func (r ratioAt) cite() string {
	return fmt.Sprintf("%s: %s → %s, %s", threadsN(r.threads), num(r.a), num(r.b), r.ci.withCI())
}

// ratioOf is b ÷ a of two cells as a finding quotes it: "1.08× (CI 1.07–1.09, 9
// batches a side)".
func ratioOf(a, b *cell) string {
	ci, ok := tpsRatio(a, b)
	if !ok {
		return "–"
	}
	return ci.cell()
}

// effectGroup is the thread counts where a variant had one verdict, in thread order.
type effectGroup struct {
	effect stats.Verdict
	rs     []ratioAt
}

// groupByEffect splits the ratios by verdict, groups in order of first appearance.
func groupByEffect(rs []ratioAt) []effectGroup {
	var gs []effectGroup
	idx := map[stats.Verdict]int{}
	for _, r := range rs {
		e := r.ci.Verdict
		i, ok := idx[e]
		if !ok {
			i = len(gs)
			idx[e] = i
			gs = append(gs, effectGroup{effect: e})
		}
		gs[i].rs = append(gs[i].rs, r)
	}
	return gs
}

// scope names a set of thread counts within the ones measured, in the run's own numbers:
// "at 16 threads", "up to 4 threads", "from 16 threads on", "from 16 to 64 threads", "at
// every thread count measured", or a list when they are not contiguous.
func scope(sub []ratioAt, all []ratioAt) string {
	if len(sub) == 1 {
		return "at " + threadsN(sub[0].threads)
	}
	first, last := -1, -1
	for i, r := range all {
		if r.threads == sub[0].threads {
			first = i
		}
		if r.threads == sub[len(sub)-1].threads {
			last = i
		}
	}
	ts := make([]int, len(sub))
	for i, r := range sub {
		ts[i] = r.threads
	}
	switch {
	case last-first+1 != len(sub):
		return "at " + andList(ts) + " threads"
	case first == 0 && last == len(all)-1:
		return "at every thread count measured"
	case first == 0:
		return "up to " + threadsN(ts[len(ts)-1])
	case last == len(all)-1:
		return "from " + threadsN(ts[0]) + " on"
	}
	return fmt.Sprintf("from %d to %s", ts[0], threadsN(ts[len(ts)-1]))
}

// andList is "1, 4 and 16".
func andList(ts []int) string {
	s := strconv.Itoa(ts[0])
	for i, t := range ts[1:] {
		if i == len(ts)-2 {
			s += " and "
		} else {
			s += ", "
		}
		s += strconv.Itoa(t)
	}
	return s
}

// extremes are a group's lowest and highest ratio in thread order; one when they coincide.
func (g effectGroup) extremes() []ratioAt {
	lo, hi := g.rs[0], g.rs[0]
	for _, r := range g.rs[1:] {
		if r.ci.Ratio < lo.ci.Ratio {
			lo = r
		}
		if r.ci.Ratio > hi.ci.Ratio {
			hi = r
		}
	}
	switch {
	case lo.threads == hi.threads:
		return []ratioAt{lo}
	case lo.threads > hi.threads:
		return []ratioAt{hi, lo}
	}
	return []ratioAt{lo, hi}
}

var compressionVerb = map[stats.Verdict]string{stats.Higher: "helps", stats.Lower: "hurts",
	stats.NoDifference: "makes no measurable difference"}

// comparisonsOf is the comparisons of rs.
func comparisonsOf(rs []ratioAt) []comparison {
	cs := make([]comparison, len(rs))
	for i, r := range rs {
		cs[i] = r.ci
	}
	return cs
}

// compression says where compression helps, hurts, makes no measurable difference or
// cannot be told apart from plain on one link, in the thread counts the run measured, and
// what limits it where it ends up; where the run was too short, what would decide. On an
// engine without protocol compression N2 is the tunnel, and the sentence says so.
func (s *bwStudy) compression(l int64) string {
	a, b := bwKey{l, plain}, bwKey{l, compressed}
	what, ratio, with := "compression", "Compression", "compression"
	if !s.has(b) && s.has(bwKey{l, tunneled}) {
		b, what, ratio, with = bwKey{l, tunneled}, "wirelab's tunnel (the protocol has no compression of its own)", "Tunnel", "the tunnel"
	}
	rs := s.ratios(a, b)
	if len(rs) == 0 {
		return ""
	}
	gs := groupByEffect(rs)
	parts := make([]string, len(gs))
	var cites []string
	for i, g := range gs {
		ex := g.extremes()
		lo, hi := ex[0].ci.Ratio, ex[len(ex)-1].ci.Ratio
		verb := compressionVerb[g.effect]
		if g.effect == stats.TooShort {
			verb = undecided(comparisonsOf(g.rs), "cannot be told apart from plain")
		}
		parts[i] = fmt.Sprintf("%s %s (%s)", verb, scope(g.rs, rs), span(math.Min(lo, hi), math.Max(lo, hi)))
		for _, r := range ex {
			cites = append(cites, r.cite())
		}
	}
	f := fmt.Sprintf("On the %s link %s %s. %s ÷ plain (N2 %s): %s.",
		link.FormatRate(l), what, strings.Join(parts, " and "), ratio, link.FormatRate(l), strings.Join(cites, "; "))
	// The verdict where the highest thread counts end up: the tail of one effect.
	tail := len(rs) - 1
	for tail > 0 && rs[tail-1].ci.Verdict == rs[len(rs)-1].ci.Verdict {
		tail--
	}
	from := rs[tail].threads
	if bn := s.majorityBottleneck(b, from); bn != "" {
		where := " " + scope(rs[tail:], rs)
		if tail == 0 {
			where = ""
		}
		f += " With " + with + " the bottleneck" + where + " is " + bn
		if pb := s.majorityBottleneck(a, from); pb != "" && pb != bn {
			f += " (plain: " + pb + ")"
		}
		f += "."
	}
	return f + toDecideAll(rs)
}

// toDecideAll is " To tell: …" with each distinct reason the ratios could not be decided
// for and what would decide it; empty when every ratio was decided.
func toDecideAll(rs []ratioAt) string {
	var why []string
	for _, r := range rs {
		if w := r.ci.toDecide(); w != "" && !contains(why, w) {
			why = append(why, w)
		}
	}
	if len(why) == 0 {
		return ""
	}
	return " To tell: " + strings.Join(why, "; ") + "."
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

// tlsEffect is what TLS does at one thread count: "costs 9.5% at 1 thread", "makes no
// measurable difference at 1 thread", or "cannot be told apart from plain (too short to
// tell) at 1 thread".
func tlsEffect(r ratioAt) string {
	switch r.ci.Verdict {
	case stats.NoDifference:
		return compressionVerb[r.ci.Verdict] + " at " + threadsN(r.threads)
	case stats.TooShort:
		return undecided([]comparison{r.ci}, "cannot be told apart from plain") + " at " + threadsN(r.threads)
	}
	return "costs " + cost(r.ci.Ratio) + " at " + threadsN(r.threads)
}

func (s *bwStudy) tls(l int64) string {
	a, b := bwKey{l, plain}, bwKey{l, encrypted}
	rs := s.ratios(a, b)
	if len(rs) == 0 {
		return ""
	}
	first, last := rs[0], rs[len(rs)-1]
	f := fmt.Sprintf("On the %s link TLS %s (N3 %s, %s)", link.FormatRate(l), tlsEffect(first), link.FormatRate(l), first.cite())
	if last.threads != first.threads {
		f += fmt.Sprintf(" and %s (%s; bottleneck %s)", tlsEffect(last), last.cite(), orDash(s.g.at(b, last.threads).bottleneck()))
	}
	f += "."
	pa, pat := s.peak(a)
	pb, pbt := s.peak(b)
	// Both flat against a full link is not "stops scaling": the TLS peak must be well short.
	if ci, ok := tpsRatio(s.g.at(a, pat), s.g.at(b, pbt)); ok && ci.Verdict == stats.Lower && pbt < pat && pb < 0.9*pa {
		f += fmt.Sprintf(" TLS stops scaling after %d threads (peak %s TPS) while plain keeps scaling to %d threads (%s TPS).", pbt, num(pb), pat, num(pa))
	}
	return f + toDecideAll([]ratioAt{first, last})
}
