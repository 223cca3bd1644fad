package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// labCostRow is the environment's account of what the lab's own delay line cost over the
// run's points: all of its CPU per packet and as a share of the machine it ran on (the
// figure a point is flagged `lab` on), the part its verdict writes took, and, in results
// written when an estimate of delivery was subtracted, what was and the figure the flag
// was then decided on; ok is false when no point ran through one.
func labCostRow(pts []result.Point) (row []string, ok bool) {
	var perPkt, share, verdict, charged, late extent
	var subtracted float64
	var subPts int
	p99 := 0.0
	var hiAt string
	hosts := map[string]bool{}
	for _, p := range pts {
		c := p.LabCost
		if c == nil || c.DelayLinePackets == 0 {
			continue
		}
		hosts[c.Host] = true
		// The release lateness: every release counted has a p99 bound of at least 1 µs
		// (-1: beyond the histogram); results written before it was recorded have 0.
		if c.ReleaseLateP99Us != 0 {
			late.add(c.ReleaseLateMeanUs)
			if p99 >= 0 && (c.ReleaseLateP99Us < 0 || c.ReleaseLateP99Us > p99) {
				p99 = c.ReleaseLateP99Us
			}
		}
		perPkt.add(c.WholeUsPerPacket())
		if share.n == 0 || c.WholeShare() > share.hi {
			hiAt = fmt.Sprintf("%s, %s", p.Series, threadsN(p.Threads))
		}
		share.add(c.WholeShare())
		if v := c.VerdictUsPerPacket(); v > 0 {
			verdict.add(v)
		}
		if sub := c.SubtractedCPUS(); sub > 0 {
			subtracted += sub
			subPts++
			charged.add(c.MachineShare)
		}
	}
	if share.n == 0 {
		return nil, false
	}
	where, machine := "", "the machine"
	if !hosts[""] {
		where, machine = " (on "+strings.Join(slices.Sorted(maps.Keys(hosts)), ", ")+")", "its host"
	}
	text := fmt.Sprintf("the delay line%s used %s µs of CPU per packet and %s of %s in all (most at %s)",
		where, perPkt.text("%.1f", 1), share.text("%.1f%%", 100), machine, hiAt)
	if subPts < share.n {
		text += fmt.Sprintf("; all of it is charged to the lab, and a point where it passed %.0f%% is flagged `lab`",
			100*result.LabBoundShare)
	}
	if verdict.n > 0 {
		text += fmt.Sprintf(". Of that, its verdict writes took %s µs per packet released: the system call, inside which "+
			"the kernel delivers the packets into the receiving host's stack (the sender's work without a delay line); "+
			"user space cannot tell the two apart, so none of it is subtracted", verdict.text("%.1f", 1))
	}
	if subPts > 0 {
		text += fmt.Sprintf(". %d point(s) were written when an estimate of the packets' delivery into the receiving stack "+
			"was subtracted (%.2f s of CPU): their `lab` flag was decided on the rest, %s of %s",
			subPts, subtracted, charged.text("%.1f%%", 100), machine)
	}
	text += fmt.Sprintf("; measured on %d point(s)", share.n)
	if hosts[""] {
		text += ", left out of the profiles `predict` uses"
	}
	if late.n > 0 {
		bound := fmt.Sprintf("≤ %.0f µs", p99)
		if p99 < 0 {
			bound = "above 5 ms"
		}
		text += fmt.Sprintf(". Its own fidelity: each release left %s µs after it was due on average "+
			"(99th percentile %s; a round trip has two releases)", late.text("%.1f", 1), bound)
	}
	return []string{"lab's own cost", text}, true
}

// extent is the lowest and highest of the values added to it.
type extent struct {
	lo, hi float64
	n      int
}

func (s *extent) add(x float64) {
	if s.n == 0 || x < s.lo {
		s.lo = x
	}
	if s.n == 0 || x > s.hi {
		s.hi = x
	}
	s.n++
}

// text is the extent in format f, each end times scale (100 for a share), as spanText
// writes it.
func (s extent) text(f string, scale float64) string { return spanText(scale*s.lo, scale*s.hi, f) }

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
	return Callout{"warning", fmt.Sprintf("On %d point(s) the lab's own delay line used more than %.0f%% of the machine it ran on: %s. "+
		"Where the machine's CPU limited them the verdict says \"lab\", not the server or the client: on machines of "+
		"their own, or with netem, these points would run faster.",
		len(ids), 100*result.LabBoundShare, strings.Join(ids, "; "))}
}

// spanText is "lo–hi" in format f, or one value when they agree at that precision.
func spanText(lo, hi float64, f string) string {
	a, b := fmt.Sprintf(f, lo), fmt.Sprintf(f, hi)
	if a == b {
		return a
	}
	return a + "–" + b
}

// delayLineHold is what the run recorded of the delay line's own request to keep its
// machine's CPUs awake, for the CPU idle row: held on every point, not held on some (with
// the first error), or, where no point recorded it (older results), only that it asks;
// "" when the run had no delay line.
func delayLineHold(e result.Environment, pts []result.Point) string {
	var n, held int
	var firstErr string
	hosts := map[string]bool{}
	for _, p := range pts {
		c := p.LabCost
		if c == nil || c.CPUHold == nil {
			continue
		}
		n++
		if c.Host != "" {
			hosts[c.Host] = true
		}
		if c.CPUHold.Held {
			held++
		} else if firstErr == "" {
			firstErr = c.CPUHold.Error
		}
	}
	line := "the nfqueue delay line"
	if len(hosts) > 0 {
		line += " on " + strings.Join(slices.Sorted(maps.Keys(hosts)), ", ")
	}
	switch {
	case n == 0 && !link.Shaper(e.Shaper).Uses(link.ShaperNfqueue):
		return ""
	case n == 0:
		return line + " asks for 0 µs while it runs; whether it held is not recorded in these results"
	case held == n:
		return fmt.Sprintf("%s held 0 µs while it ran (its timing needs it; recorded on %d point(s))", line, n)
	}
	return fmt.Sprintf("%s could not hold 0 µs on %d of %d point(s) (%s): its CPUs may have slept deeply and its releases woken late",
		line, n-held, n, firstErr)
}
