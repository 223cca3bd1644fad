package study

import (
	"context"
	"runtime"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// DelayLine is one user-space delay line a point's packets pass: the host it runs on ("" =
// this machine) and how to read its stats file there.
type DelayLine struct {
	Host string
	Read func(ctx context.Context) (link.DelayerStats, error)
}

// DelayLineReader is a Backend whose wire runs its delay lines on other machines (real
// hosts: each client whose kernel has no netem runs one): DelayLines are those of the wire
// as last shaped. A backend that is not one has at most the delay line of Wire().
type DelayLineReader interface {
	DelayLines() []DelayLine
}

// delayLines are the delay lines of e's wire: the backend's own account, else the one
// whose stats file Wire() names on this machine.
func (e *Env) delayLines() []DelayLine {
	if r, ok := e.Backend.(DelayLineReader); ok {
		return r.DelayLines()
	}
	path := e.Backend.Wire().DelayerStats
	if path == "" {
		return nil
	}
	return []DelayLine{{Read: func(context.Context) (link.DelayerStats, error) { return link.ReadDelayerStats(path) }}}
}

// delayLineMark is one delay line's stats at the start of a measurement; a mark whose
// stats were unreadable yields no cost.
type delayLineMark struct {
	line DelayLine
	st   link.DelayerStats
	ok   bool
}

// markDelayLines reads the stats of the wire's delay lines, where it has any.
func (e *Env) markDelayLines(ctx context.Context) []delayLineMark {
	var out []delayLineMark
	for _, l := range e.delayLines() {
		st, err := l.Read(ctx)
		out = append(out, delayLineMark{line: l, st: st, ok: err == nil})
	}
	return out
}

// labCosts are what the marked delay lines cost since their marks, each against the
// cores of the machine it ran on (coresOf its host); the first is the one that took the
// largest share (the point's LabCost), nil without a delay line whose cost can be read
// (a restarted delayer).
func labCosts(ctx context.Context, marks []delayLineMark, coresOf func(host string) int) []*result.LabCost {
	var out []*result.LabCost
	for _, m := range marks {
		if lc := m.labCost(ctx, coresOf(m.line.Host)); lc != nil {
			out = append(out, lc)
			if lc.MachineShare > out[0].MachineShare {
				out[0], out[len(out)-1] = out[len(out)-1], out[0]
			}
		}
	}
	return out
}

// labCost is what the delay line cost since the mark, on a machine of cores CPUs; nil when
// no cost can be read.
func (m delayLineMark) labCost(ctx context.Context, cores int) *result.LabCost {
	if !m.ok {
		return nil
	}
	now, err := m.line.Read(ctx)
	if err != nil {
		return nil
	}
	c, ok := link.CostBetween(m.st, now)
	if !ok {
		return nil
	}
	lc := costOf(c, m.line.Host, cores)
	lc.CPUHold = now.CPUHold
	return lc
}

// costOf is the point's account of delay line cost c on host (cores CPUs): all of its CPU
// charged to the lab (see link.DelayerCost), the verdict writes shown beside it.
func costOf(c link.DelayerCost, host string, cores int) *result.LabCost {
	lc := &result.LabCost{Host: host, DelayLineCPUS: c.CPU.Seconds(), DelayLineOwnCPUS: c.CPU.Seconds(),
		VerdictCPUS: c.Verdicts.Seconds(), DelayLinePackets: c.Packets, DelayLineAccepted: c.Accepted,
		OwnUsPerPacket: float64(c.PerPacket().Nanoseconds()) / 1e3, MachineShare: c.MachineShare(cores), Cores: cores,
		ReleaseLateMeanUs: float64(c.LateMean().Nanoseconds()) / 1e3}
	if p99 := c.LateQuantile(0.99); p99 < 0 {
		lc.ReleaseLateP99Us = -1
	} else {
		lc.ReleaseLateP99Us = float64(p99.Microseconds())
	}
	lc.LabBound = result.IsLabBound(lc.MachineShare)
	return lc
}

// hostCores is the cores of the machine named host: this machine's for "", else the
// run's host of that name (0 when the run does not know it: no share is then claimed).
func hostCores(hosts []result.Host) func(host string) int {
	return func(host string) int {
		if host == "" {
			return runtime.NumCPU()
		}
		for _, h := range hosts {
			if h.Name == host {
				return h.Cores
			}
		}
		return 0
	}
}

// clientLabCosts gives each client of a split load the cost of the delay line on its own
// host, where one ran.
func clientLabCosts(clients []result.ClientLoad, costs []*result.LabCost) {
	for _, c := range costs {
		for i := range clients {
			if c.Host != "" && clients[i].Host == c.Host {
				clients[i].LabCost = c
			}
		}
	}
}
