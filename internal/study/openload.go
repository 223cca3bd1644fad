package study

import (
	"context"
	"time"

	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/result"
)

// PacedLoad is a load that is not a closed-loop cell: a driver that keeps its own pace
// and length (a replay of a captured log), run by MeasurePaced. It returns the per-second
// ticks it reported, with Load.Start the origin of their clock and Load.Totals its
// whole-run rates (the point's figures when it ran less than a second), and how long it
// ran: the window its ticks are averaged over.
type PacedLoad func(ctx context.Context) (ld *Load, ran time.Duration, err error)

// MeasurePaced runs load with the wire and CPU sampler alongside, as measureLoad runs a
// closed-loop driver, and fills p (made by Env.BasePoint) as every point is filled: the
// per-second series and means over the load's window (no warm-up; the samples of the
// load's start-up and of the seconds after it are left out), the lab's cost, the lead
// of the load's clock, the bottleneck verdict and, when the server's CPU was seen, the
// per-transaction profile. A load shorter than a second has no tick: its rates are its
// totals and its wire and CPU the whole window's. It returns the sampler's totals over
// the whole window. On an error the point holds what could be filled.
func MeasurePaced(ctx context.Context, e *Env, p *result.Point, sides Sides, load PacedLoad) (metrics.Totals, error) {
	marks := e.markDelayLines(ctx)
	var ld *Load
	var ran time.Duration
	samples, tot, at, err := e.sampled(ctx, sides, func(ctx context.Context) error {
		var lerr error
		ld, ran, lerr = load(ctx)
		return lerr
	}, nil)
	if ld == nil {
		return tot, err
	}
	if cs := labCosts(ctx, marks, hostCores(e.Hosts)); len(cs) > 0 {
		p.LabCost = cs[0]
	}
	samples, lead := alignSamples(samples, at, ld)
	p.LoadLeadS = lead.Seconds()
	p.DurationS = ran.Seconds()
	avg := FillSeries(p, ld.Ticks, samples, Window{End: ran, Trim: true})
	if len(ld.Ticks) == 0 && ld.Totals != nil {
		p.TPS, p.QPS, p.LatP95Ms = ld.Totals.TPS, ld.Totals.QPS, ld.Totals.LatP95Ms
	}
	if len(samples) == 0 {
		a := tot.Avg()
		p.WireBytesPerSUp, p.WireBytesPerSDown, p.CPUServer, p.CPUClient = a.UpBytesPerS, a.DownBytesPerS, a.CPUServer, a.CPUClient
		p.LinkUtilization = max(metrics.Utilization(a.UpBytesPerS, p.LinkRateBps), metrics.Utilization(a.DownBytesPerS, p.LinkRateBps))
		avg = Averages{CPUMachine: a.CPUTotal, UpPkts: a.UpPktsPerS, DownPkts: a.DownPktsPerS}
	}
	if ld.Totals != nil {
		p.Errors = ld.Totals.Errors
	}
	judge(p, avg, e.Servers[0].Pid() > 0, e.Cores, 1)
	return tot, err
}
