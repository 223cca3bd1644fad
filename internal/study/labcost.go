package study

import (
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// delayLineMark is the delay line's stats at the start of a measurement; the zero mark
// (no delay line, or its stats unreadable) yields no cost.
type delayLineMark struct {
	path string
	st   link.DelayerStats
	ok   bool
}

// markDelayLine reads the delay line's stats, where the wire has one.
func (e *Env) markDelayLine() delayLineMark {
	path := e.Backend.Wire().DelayerStats
	if path == "" {
		return delayLineMark{}
	}
	st, err := link.ReadDelayerStats(path)
	return delayLineMark{path: path, st: st, ok: err == nil}
}

// labCost is what the delay line cost since the mark, on a machine of cores CPUs; nil
// where there is no delay line or no cost can be read (a restarted delayer).
func (m delayLineMark) labCost(cores int) *result.LabCost {
	if !m.ok {
		return nil
	}
	now, err := link.ReadDelayerStats(m.path)
	if err != nil {
		return nil
	}
	c, ok := link.CostBetween(m.st, now)
	if !ok {
		return nil
	}
	lc := &result.LabCost{DelayLineCPUS: c.CPU.Seconds(), DelayLineOwnCPUS: c.Own().Seconds(),
		DelayLinePackets: c.Packets, OwnUsPerPacket: float64(c.OwnPerPacket().Nanoseconds()) / 1e3,
		MachineShare: c.MachineShare(cores), ReleaseLateMeanUs: float64(c.LateMean().Nanoseconds()) / 1e3}
	if p99 := c.LateQuantile(0.99); p99 < 0 {
		lc.ReleaseLateP99Us = -1
	} else {
		lc.ReleaseLateP99Us = float64(p99.Microseconds())
	}
	lc.LabBound = lc.MachineShare > result.LabBoundShare
	return lc
}
