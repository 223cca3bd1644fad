package study

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

// Sides says whose CPU counts as the server's and the client's during a measurement; the
// funcs are called every sample, so processes may appear after the sampler starts.
type Sides struct {
	Server, Client func() []int
	// DriverHost is the host the load driver runs on (a lab role; "" = Env.Far): a
	// backend whose agents find the driver by name looks for it there.
	DriverHost string
	// Clients, when the cell's load is split among several client hosts (Fleet), are
	// their roles: the sampler samples each one's wire and driver, and the server once.
	Clients []string
	// Point is the point being measured, as far as it is filled: its study, series,
	// channel and threads, with the wire, name what is published live (Publisher); nil
	// publishes nothing.
	Point *result.Point
}

// Sampled runs fn with the wire and CPU sampler running, and returns the per-second
// samples and the totals over the whole window (fn's work, whatever it is: a load, a
// catch-up after it). Up is client -> server, down server -> client (toward Far).
func (e *Env) Sampled(ctx context.Context, sides Sides, fn func(ctx context.Context) error) ([]metrics.Sample, metrics.Totals, error) {
	ss, tot, _, err := e.sampled(ctx, sides, fn, nil)
	return ss, tot, err
}

// sampled is Sampled, and also says when sampling started: the first sample ends a second
// after it. After the sampler stops, stopped (when set) reads what else it kept.
func (e *Env) sampled(ctx context.Context, sides Sides, fn func(ctx context.Context) error, stopped func(Sampler)) ([]metrics.Sample, metrics.Totals, time.Time, error) {
	sampler := e.Backend.Sampler(sides)
	if err := sampler.Start(ctx); err != nil {
		return nil, metrics.Totals{}, time.Time{}, fmt.Errorf("start wire sampler: %w", err)
	}
	start := time.Now()
	e.live = e.startLive(sides, sampler)
	err := fn(ctx)
	samples := sampler.Stop()
	e.live.end()
	e.live = nil
	if stopped != nil {
		stopped(sampler)
	}
	return samples, sampler.Totals(), start, err
}

// alignSamples drops the samples taken before the load's clock began (ld.Start), to the
// nearest whole second, so that sample i and the driver's tick i cover the same second; it
// returns what is left and the lead it measured (0 when ld has no Start). The sampler
// starts before the driver is launched, and the driver counts its seconds from when its
// clients are connected (Load.Start). Unaligned, a lead of a second or more would put
// samples of the connection phase, when hardly a byte moves, among a point's measured
// seconds.
func alignSamples(ss []metrics.Sample, sampled time.Time, ld *Load) ([]metrics.Sample, time.Duration) {
	if ld == nil || ld.Start.IsZero() || sampled.IsZero() {
		return ss, 0
	}
	lead := ld.Start.Sub(sampled)
	if lead <= 0 {
		return ss, 0
	}
	k := min(int(math.Round(lead.Seconds())), len(ss))
	return ss[k:], lead
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
	// Links is how many shaped links of the point's rate carry its load side by side: one
	// per client host when the load is split among several, each with its own NIC shaped
	// (0 = 1). The link's utilisation is the wire's bytes over all of them.
	Links int
}

// Averages are the window's means that are not point fields themselves.
type Averages struct {
	CPUMachine       float64 // cores, the whole machine
	UpPkts, DownPkts float64 // packets per second each way
}

// FillSeries turns a driver's per-second ticks and the sampler's samples into the point's
// per-second series and its averages over the window: TPS, QPS, p95 (mean of the
// per-second 95th percentiles), TPS CV, wire bytes each way, CPU per side and the link's
// utilisation, and, when the driver reports it each second, the mean latency and its
// spread. It is the one place a point's series and means are computed.
func FillSeries(p *result.Point, ticks []Tick, ss []metrics.Sample, w Window) Averages {
	warm, end := w.Warmup.Seconds(), w.End.Seconds()
	if w.Trim {
		for len(ticks) > 0 && ticks[len(ticks)-1].T > end+1e-9 {
			ticks = ticks[:len(ticks)-1]
		}
		if len(ss) > len(ticks) && len(ticks) > 0 {
			ss = ss[:len(ticks)]
		}
	}
	n := max(len(ticks), len(ss), w.MinSeconds)
	var tps, qps, p95, up, down, cs, cc, total, pu, pd []float64
	var lat []Tick
	for i := 0; i < n; i++ {
		s := result.Second{T: float64(i + 1)}
		if i < len(ticks) {
			tk := ticks[i]
			s.T, s.TPS, s.QPS, s.LatP95Ms, s.LatAvgMs = tk.T, tk.TPS, tk.QPS, tk.LatP95Ms, tk.LatAvgMs
			s.Errors, s.Reconnects = tk.Errors, tk.Reconnects
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
		if i < len(ticks) {
			tps, qps, p95 = append(tps, s.TPS), append(qps, s.QPS), append(p95, s.LatP95Ms)
			lat = append(lat, ticks[i])
		}
		if i < len(ss) {
			up, down = append(up, s.WireUpBps), append(down, s.WireDownBps)
			cs, cc = append(cs, s.CPUServer), append(cc, s.CPUClient)
			total = append(total, ss[i].CPUTotal)
			pu, pd = append(pu, ss[i].UpPktsPerS), append(pd, ss[i].DownPktsPerS)
		}
	}
	p.TPS, p.QPS, p.LatP95Ms, p.TPSCV = stats.Mean(tps), stats.Mean(qps), stats.Mean(p95), stats.CV(tps)
	if avg, sd, ok := pooledLatency(lat); ok {
		p.LatAvgMs, p.LatStddevMs = avg, sd
	}
	p.WireBytesPerSUp, p.WireBytesPerSDown = stats.Mean(up), stats.Mean(down)
	p.CPUServer, p.CPUClient = stats.Mean(cs), stats.Mean(cc)
	rate := p.LinkRateBps * int64(max(w.Links, 1))
	p.LinkUtilization = math.Max(metrics.Utilization(p.WireBytesPerSUp, rate), metrics.Utilization(p.WireBytesPerSDown, rate))
	return Averages{CPUMachine: stats.Mean(total), UpPkts: stats.Mean(pu), DownPkts: stats.Mean(pd)}
}

// pooledLatency is the mean and standard deviation of every transaction in ticks, from
// each second's own mean and deviation weighted by its transactions: the figures a
// single summary over exactly these seconds would print. ok is false when the driver
// reports no mean latency (sysbench) or nothing completed.
func pooledLatency(ticks []Tick) (avg, stddev float64, ok bool) {
	var n, sum, sumSq float64
	for _, t := range ticks {
		if t.LatAvgMs <= 0 || t.TPS <= 0 {
			continue
		}
		n += t.TPS
		sum += t.TPS * t.LatAvgMs
		sumSq += t.TPS * (t.LatStddevMs*t.LatStddevMs + t.LatAvgMs*t.LatAvgMs)
	}
	if n == 0 {
		return 0, 0, false
	}
	avg = sum / n
	return avg, math.Sqrt(math.Max(0, sumSq/n-avg*avg)), true
}
