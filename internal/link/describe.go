package link

import (
	"math"
	"sort"
	"time"

	"github.com/wirelab/wirelab/internal/result"
)

// Directions describes how Apply shapes c on each egress interface of the wire, in the
// numbers its shapers used: HTB's burst and leaf queue (HTBBurst, HTBLeafLimit) when the
// rate is capped, the delay line's queue (QueueLen) when there is delay, jitter or loss.
// shaper is what Apply reported (Applied.Shaper); toward maps each host to the wire
// interface that delivers to it (the lab's WireIfaces). Entries are in host order.
func Directions(c Condition, shaper Shaper, toward map[string]string) []result.LinkDirection {
	hosts := make([]string, 0, len(toward))
	for h := range toward {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	ms := func(d float64) float64 { return d / 1e6 }
	var out []result.LinkDirection
	for _, h := range hosts {
		d := result.LinkDirection{Toward: h, Iface: toward[h], Shaper: string(shaper), RateBps: c.RateBps,
			DelayMs: ms(float64(c.Delay)), JitterMs: ms(float64(c.Jitter)), LossPct: c.LossPct}
		if !c.Unlimited() {
			d.BurstBytes, d.QueuePackets = HTBBurst(c.RateBps), HTBLeafLimit(c.RateBps, c.Delay)
		}
		if c.NeedsDelayLine() && shaper.DelayLine() != "" {
			d.DelayQueuePackets = QueueLen(c.RateBps, c.Delay+c.Jitter)
		}
		out = append(out, d)
	}
	return out
}

// DirectionCondition is the condition one direction of results.json records (what
// Directions wrote), so a reader of a results file asks Condition's own rules
// (NeedsDelayLine) instead of spelling them out again.
func DirectionCondition(d result.LinkDirection) Condition {
	dur := func(ms float64) time.Duration { return time.Duration(math.Round(ms * float64(time.Millisecond))) }
	return Condition{RateBps: d.RateBps, Delay: dur(d.DelayMs), Jitter: dur(d.JitterMs), LossPct: d.LossPct}
}
