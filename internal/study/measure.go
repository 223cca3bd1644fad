package study

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// Sides says whose CPU counts as the server's and the client's during a measurement; the
// funcs are called every sample, so processes may appear after the sampler starts.
type Sides struct {
	Server, Client func() []int
}

// Sampled runs fn with the wire and CPU sampler running, and returns the per-second
// samples and the totals over the whole window (fn's work, whatever it is: a load, a
// catch-up after it). The wire is the wire host's interfaces facing the server (up,
// client -> server) and Far (down, server -> client).
func (e *Env) Sampled(ctx context.Context, sides Sides, fn func(ctx context.Context) error) ([]metrics.Sample, metrics.Totals, error) {
	st := e.Lab.State
	src := metrics.Source{WireNS: st.NS(lab.Wire), UpIface: st.WireIfaces[lab.Server],
		DownIface: st.WireIfaces[e.Far], ServerPIDs: sides.Server, ClientPIDs: sides.Client}
	sampler := metrics.NewSampler(src, time.Second, e.Logger)
	if err := sampler.Start(ctx); err != nil {
		return nil, metrics.Totals{}, fmt.Errorf("start wire sampler: %w", err)
	}
	err := fn(ctx)
	samples := sampler.Stop()
	return samples, sampler.Totals(), err
}

// Sysbench is one sysbench run's output: the per-second lines in order and the summary.
type Sysbench struct {
	mu        sync.Mutex
	intervals []sysbench.Interval
	Summary   *sysbench.Summary
}

// RunSysbench runs sysbench with per-second reports. onStart, when set, gets sysbench's
// pid (its CPU is the client's).
func RunSysbench(ctx context.Context, o sysbench.Options, onStart func(pid int), e *Env) (*Sysbench, error) {
	sb := &Sysbench{}
	o.ReportInterval = 1
	o.OnStart = onStart
	sum, err := sysbench.Run(ctx, o, func(iv sysbench.Interval) {
		sb.mu.Lock()
		sb.intervals = append(sb.intervals, iv)
		sb.mu.Unlock()
	}, e.Logger)
	sb.Summary = sum
	return sb, err
}

// Intervals returns the per-second lines received so far.
func (s *Sysbench) Intervals() []sysbench.Interval {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sysbench.Interval(nil), s.intervals...)
}

// Window says which seconds of a point count in its averages.
type Window struct {
	// Warmup: seconds at the start, kept in the series (flagged) but not averaged.
	Warmup time.Duration
	// End of the measured load. A closed loop (Trim) drops what comes after it: sysbench
	// keeps reporting while threads finish their last queries after --time (a loaded
	// 2-core box took 10.5 s for --time=5). Otherwise the series goes on (a replica's
	// catch-up) but only seconds up to End count.
	End  time.Duration
	Trim bool
	// MinSeconds: the series covers at least this many seconds.
	MinSeconds int
}

// Averages are the window's means that are not point fields themselves.
type Averages struct {
	CPUMachine       float64 // cores, the whole machine
	UpPkts, DownPkts float64 // packets per second each way
}

// FillSeries turns sysbench's per-second lines and the sampler's samples into the point's
// per-second series and its averages over the window: TPS, QPS, p95 (mean of the
// per-second 95th percentiles), TPS CV, wire bytes each way, CPU per side and the link's
// utilisation. It is the one place a point's series and means are computed.
func FillSeries(p *result.Point, ivs []sysbench.Interval, ss []metrics.Sample, w Window) Averages {
	warm, end := w.Warmup.Seconds(), w.End.Seconds()
	if w.Trim {
		for len(ivs) > 0 && ivs[len(ivs)-1].T > end+1e-9 {
			ivs = ivs[:len(ivs)-1]
		}
		if len(ss) > len(ivs) && len(ivs) > 0 {
			ss = ss[:len(ivs)]
		}
	}
	n := max(len(ivs), len(ss), w.MinSeconds)
	var tps, qps, p95, up, down, cs, cc, total, pu, pd []float64
	for i := 0; i < n; i++ {
		s := result.Second{T: float64(i + 1)}
		if i < len(ivs) {
			iv := ivs[i]
			s.T, s.TPS, s.QPS, s.LatP95Ms, s.Errors, s.Reconnects = iv.T, iv.TPS, iv.QPS, iv.LatPct, iv.Errors, iv.Reconnects
		}
		if i < len(ss) {
			sm := ss[i]
			s.WireUpBps, s.WireDownBps, s.CPUServer, s.CPUClient = sm.UpBytesPerS, sm.DownBytesPerS, sm.CPUServer, sm.CPUClient
		}
		s.Warmup = warm > 0 && s.T <= warm+1e-9
		p.Seconds = append(p.Seconds, s)
		if s.Warmup || s.T > end+0.5 {
			continue
		}
		if i < len(ivs) {
			tps, qps, p95 = append(tps, s.TPS), append(qps, s.QPS), append(p95, s.LatP95Ms)
		}
		if i < len(ss) {
			up, down = append(up, s.WireUpBps), append(down, s.WireDownBps)
			cs, cc = append(cs, s.CPUServer), append(cc, s.CPUClient)
			total = append(total, ss[i].CPUTotal)
			pu, pd = append(pu, ss[i].UpPktsPerS), append(pd, ss[i].DownPktsPerS)
		}
	}
	p.TPS, p.QPS, p.LatP95Ms, p.TPSCV = stats.Mean(tps), stats.Mean(qps), stats.Mean(p95), stats.CV(tps)
	p.WireBytesPerSUp, p.WireBytesPerSDown = stats.Mean(up), stats.Mean(down)
	p.CPUServer, p.CPUClient = stats.Mean(cs), stats.Mean(cc)
	p.LinkUtilization = math.Max(metrics.Utilization(p.WireBytesPerSUp, p.LinkRateBps),
		metrics.Utilization(p.WireBytesPerSDown, p.LinkRateBps))
	return Averages{CPUMachine: stats.Mean(total), UpPkts: stats.Mean(pu), DownPkts: stats.Mean(pd)}
}

// NewSysbench is a finished run's output, for tests and replays.
func NewSysbench(ivs []sysbench.Interval, sum *sysbench.Summary) *Sysbench {
	return &Sysbench{intervals: ivs, Summary: sum}
}
