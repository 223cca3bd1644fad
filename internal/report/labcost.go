package report

import (
	"fmt"
	"strings"

	"github.com/wirelab/wirelab/internal/result"
)

// labCostRow is the environment's account of what the lab's own delay line cost over the
// run's points (its CPU per packet and share of the machine); ok is false when no point ran
// through one.
func labCostRow(pts []result.Point) (row []string, ok bool) {
	var n, timed int
	var loUs, hiUs, loShare, hiShare, loLate, hiLate, p99 float64
	var hiAt string
	for _, p := range pts {
		c := p.LabCost
		if c == nil || c.DelayLinePackets == 0 {
			continue
		}
		// The release lateness: every release counted has a p99 bound of at least 1 µs
		// (-1: beyond the histogram); results written before it was recorded have 0.
		if c.ReleaseLateP99Us != 0 {
			if timed == 0 || c.ReleaseLateMeanUs < loLate {
				loLate = c.ReleaseLateMeanUs
			}
			if timed == 0 || c.ReleaseLateMeanUs > hiLate {
				hiLate = c.ReleaseLateMeanUs
			}
			if p99 >= 0 && (c.ReleaseLateP99Us < 0 || c.ReleaseLateP99Us > p99) {
				p99 = c.ReleaseLateP99Us
			}
			timed++
		}
		if n == 0 || c.OwnUsPerPacket < loUs {
			loUs = c.OwnUsPerPacket
		}
		if n == 0 || c.OwnUsPerPacket > hiUs {
			hiUs = c.OwnUsPerPacket
		}
		if n == 0 || c.MachineShare < loShare {
			loShare = c.MachineShare
		}
		if n == 0 || c.MachineShare > hiShare {
			hiShare, hiAt = c.MachineShare, fmt.Sprintf("%s, %s", p.Series, threadsN(p.Threads))
		}
		n++
	}
	if n == 0 {
		return nil, false
	}
	text := fmt.Sprintf("the delay line used %s µs of CPU per packet and %s of the machine "+
		"(most at %s), not counting the delivery of packets into the receiving host's stack, which the sender pays "+
		"without a delay line; measured on %d point(s), left out of the profiles `predict` uses",
		spanText(loUs, hiUs, "%.1f"), spanText(100*loShare, 100*hiShare, "%.1f%%"), hiAt, n)
	if timed > 0 {
		bound := fmt.Sprintf("≤ %.0f µs", p99)
		if p99 < 0 {
			bound = "above 5 ms"
		}
		text += fmt.Sprintf(". Its own fidelity: each release left %s µs after it was due on average "+
			"(99th percentile %s; a round trip has two releases)", spanText(loLate, hiLate, "%.1f"), bound)
	}
	return []string{"lab's own cost", text}, true
}

// labBoundCallout names the points whose lab cost exceeded result.LabBoundShare of the
// machine; nil when none did.
func labBoundCallout(pts []result.Point) Block {
	var ids []string
	for _, p := range pts {
		if c := p.LabCost; c != nil && c.LabBound {
			ids = append(ids, fmt.Sprintf("%s/%s at %s (%.0f%%)", p.Study, p.Series, threadsN(p.Threads), 100*c.MachineShare))
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return Callout{"warning", fmt.Sprintf("The lab's own delay line used more than %.0f%% of the machine on %d point(s): %s. "+
		"Where the machine's CPU limited them the verdict says \"lab\", not the server or the client: on machines of "+
		"their own, or with netem, these points would run faster.",
		100*result.LabBoundShare, len(ids), strings.Join(ids, "; "))}
}

// spanText is "lo–hi" in format f, or one value when they agree at that precision.
func spanText(lo, hi float64, f string) string {
	a, b := fmt.Sprintf(f, lo), fmt.Sprintf(f, hi)
	if a == b {
		return a
	}
	return a + "–" + b
}
