package replication

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// Workload is the study's load: updates, deletes and inserts (DTLE's "增改删").
const Workload = "oltp_write_only"

// QueriesPerTxn is what one oltp_write_only transaction counts as in sysbench's QPS:
// BEGIN, an index update, a non-index update, a delete, an insert, COMMIT. sysbench's
// --rate is in transactions, so loads are whole multiples of it.
const QueriesPerTxn = 6

// PointSpec is one measurement: a load on one channel under the wire as it is now.
type PointSpec struct {
	Scenario  string
	Channel   Channel
	TargetQPS int           // 0 = no rate cap (as fast as sysbench goes)
	Duration  time.Duration // load window
	// AbortLag stops the load early once lag passes it: the point is then unbounded
	// beyond doubt, and a shorter overload means a shorter catch-up.
	AbortLag time.Duration
	Fault    *Fault // drop the wire during the load (the fault test)
}

// Fault drops the replica's link At into the load, For a while.
type Fault struct{ At, For time.Duration }

// errAbortLag is the cause of a load stopped by AbortLag.
var errAbortLag = errors.New("lag passed the abort threshold")

// Measure runs one point and returns it; a non-nil error means the point could not be
// measured at all (the lab is broken). A point whose data did not match, or whose replica
// did not catch up, comes back with Failed set and a reason.
func (r *Runner) Measure(ctx context.Context, ps PointSpec) (result.Point, error) {
	p := r.basePoint(ps)
	if r.Pair.Current() != ps.Channel {
		if err := r.Pair.Use(ctx, ps.Channel); err != nil {
			return p, err
		}
	}
	if _, err := r.Pair.CatchUp(ctx, r.Opts.CatchUpTimeout); err != nil {
		return p, fmt.Errorf("catch up before the point: %w", err)
	}
	st := r.Lab.State
	src := metrics.Source{WireNS: st.NS(lab.Wire), UpIface: st.WireIfaces[lab.Server], DownIface: st.WireIfaces[lab.Replica],
		ServerPIDs: func() []int { return []int{r.Pair.Source.Pid} }, ClientPIDs: func() []int { return []int{r.Pair.Replica.Pid} }}
	sampler := metrics.NewSampler(src, time.Second, r.Log)
	bin0, err := BinlogBytes(r.Pair.Source.DataDir)
	if err != nil {
		return p, err
	}
	if err := sampler.Start(ctx); err != nil {
		return p, fmt.Errorf("start wire sampler: %w", err)
	}
	defer sampler.Stop()
	origin := time.Now()
	lagS := StartLagSampler(ctx, r.Pair.RepDB, HeartbeatEvery, origin)
	defer lagS.Stop()

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	if ps.AbortLag > 0 {
		wg.Go(func() { watchLag(runCtx, lagS, ps.AbortLag, cancel) })
	}
	var faultErr error
	if ps.Fault != nil {
		wg.Go(func() { faultErr = r.injectFault(runCtx, *ps.Fault) })
	}
	opts := sysbench.Options{Workload: Workload, Tables: r.Opts.Tables, TableSize: r.Opts.TableSize,
		Threads: r.Opts.Threads, Time: ps.Duration, Rate: ps.TargetQPS / QueriesPerTxn, RandType: r.Opts.RandType,
		Socket: r.Pair.Source.Socket, User: r.Pair.Source.User, Password: r.Pair.Source.Password,
		DB: r.Pair.Source.DB, NS: st.NS(lab.Server), Cgroup: st.Cgroup, ReportInterval: 1}
	var ivs []sysbench.Interval
	var ivMu sync.Mutex
	sum, runErr := sysbench.Run(runCtx, opts, func(iv sysbench.Interval) {
		ivMu.Lock()
		ivs = append(ivs, iv)
		ivMu.Unlock()
	}, r.Log)
	load := time.Since(origin)
	aborted := errors.Is(context.Cause(runCtx), errAbortLag)
	cancel(nil)
	wg.Wait()
	bin1, binErr := BinlogBytes(r.Pair.Source.DataDir)
	if ctx.Err() != nil {
		return p, ctx.Err()
	}
	if runErr != nil && !aborted {
		p.Failed, p.FailReason = true, runErr.Error()
	}
	if faultErr != nil {
		p.Failed, p.FailReason = true, faultErr.Error()
	}

	catch, cuErr := r.Pair.CatchUp(ctx, r.Opts.CatchUpTimeout)
	samples, lagFails := lagS.Stop()
	ws := sampler.Stop()
	tot := sampler.Totals()
	if ctx.Err() != nil {
		return p, ctx.Err()
	}

	// Numbers over the load window.
	ivMu.Lock()
	defer ivMu.Unlock()
	rtt := r.Cond.RTT()
	ls := Analyze(samples, load, rtt, r.Opts.Rule)
	fill(&p, ivs, ws, samples, load, catch)
	if sum != nil {
		p.Errors, p.Reconnects = sum.Errors, sum.Reconnects
	}
	ex := p.Extra
	ex["lag_max_s"], ex["lag_p99_s"], ex["lag_mean_s"] = ls.MaxS, ls.P99S, ls.MeanS
	ex["lag_slope_s_per_s"], ex["lag_final_s"], ex["lag_p99_last_half_s"] = ls.SlopeSS, ls.FinalS, ls.HalfP99S
	ex["lag_samples"], ex["lag_read_failures"] = float64(ls.N), float64(lagFails)
	ex["achieved_qps"] = p.QPS
	ex["load_s"], ex["catchup_s"] = load.Seconds(), catch.Seconds()
	if binErr == nil {
		ex["binlog_mbit_s"] = Mbps(bin1-bin0, load)
		ex["binlog_bytes"] = float64(bin1 - bin0)
	}
	ex["wire_mbit_s"] = p.WireBytesPerSDown * 8 / 1e6
	ex["wire_up_mbit_s"] = p.WireBytesPerSUp * 8 / 1e6
	ex["wire_down_bytes_total"], ex["wire_up_bytes_total"] = float64(tot.DownBytes), float64(tot.UpBytes)
	if sum != nil && sum.Transactions > 0 {
		// Through catch-up: every byte it took to replicate this point's transactions.
		ex["wire_bytes_per_txn"] = float64(tot.DownBytes) / float64(sum.Transactions)
	}
	if binErr == nil && tot.DownBytes > 0 {
		ex["binlog_to_wire_ratio"] = float64(bin1-bin0) / float64(tot.DownBytes)
	}
	ex["cpu_machine"] = metrics.Mean(cpuTotals(ws))
	ex["cpu_replica"] = p.CPUClient
	ex["source_limited"] = 0
	if ps.TargetQPS > 0 && p.QPS < 0.9*float64(ps.TargetQPS) {
		ex["source_limited"] = 1
	}
	bounded := ls.Bounded && !aborted
	why := ls.Why
	if aborted {
		why = fmt.Sprintf("lag passed %s after %.0f s: load stopped early", ps.AbortLag, load.Seconds())
	}
	ex["bounded"] = b2f(bounded)
	ex["aborted_early"] = b2f(aborted)
	if !bounded {
		p.BottleneckWhy = "unbounded lag: " + why
	}
	p.Bottleneck = bottleneck(p, bounded)

	if cuErr != nil {
		p.Failed, p.FailReason = true, "replica did not catch up: "+cuErr.Error()
		ex["checksum_ok"] = 0
		return p, nil
	}
	if err := r.Pair.Verify(ctx); err != nil {
		ex["checksum_ok"] = 0
		p.Failed, p.FailReason = true, err.Error()
		return p, nil
	}
	ex["checksum_ok"] = 1
	return p, nil
}

func (r *Runner) basePoint(ps PointSpec) result.Point {
	c := r.Cond
	return result.Point{
		Study: "replication", Series: ps.Scenario, LinkRateBps: c.RateBps,
		LinkDelayMs: float64(c.Delay) / float64(time.Millisecond), LinkJitterMs: float64(c.Jitter) / float64(time.Millisecond),
		LinkLossPct: c.LossPct, TLS: ps.Channel == Tunnel,
		Compression: ps.Channel == NativeCompressed || ps.Channel == Tunnel && r.Opts.TunnelCompress != "off",
		Transport:   "tcp", Channel: string(ps.Channel), Workload: Workload, Threads: r.Opts.Threads,
		DurationS: ps.Duration.Seconds(), WireCheck: r.WireCheck,
		Extra: map[string]float64{"rtt_ms": float64(c.RTT()) / float64(time.Millisecond),
			"target_qps": float64(ps.TargetQPS), "rtt_measured_ms": r.RTTMeasuredMs},
	}
}

// fill turns sysbench's per-second lines, the wire samples and the lag samples into the
// point's per-second series and averages over the load window. The series goes on through
// the catch-up, so a chart shows lag draining after the load stops.
func fill(p *result.Point, ivs []sysbench.Interval, ws []metrics.Sample, lags []LagSample, load, catch time.Duration) {
	secs := max(len(ivs), len(ws), int(math.Ceil((load + catch).Seconds())))
	perSec := PerSecond(lags, secs)
	var tps, qps, p95, up, down, cs, cc []float64
	loadS := load.Seconds()
	for i := 0; i < secs; i++ {
		s := result.Second{T: float64(i + 1)}
		inLoad := s.T <= loadS+0.5
		if i < len(ivs) {
			iv := ivs[i]
			s.T, s.TPS, s.QPS, s.LatP95Ms, s.Errors, s.Reconnects = iv.T, iv.TPS, iv.QPS, iv.LatPct, iv.Errors, iv.Reconnects
			tps, qps, p95 = append(tps, iv.TPS), append(qps, iv.QPS), append(p95, iv.LatPct)
		}
		if i < len(ws) {
			w := ws[i]
			s.WireUpBps, s.WireDownBps, s.CPUServer, s.CPUClient = w.UpBytesPerS, w.DownBytesPerS, w.CPUServer, w.CPUClient
			if inLoad {
				up, down = append(up, w.UpBytesPerS), append(down, w.DownBytesPerS)
				cs, cc = append(cs, w.CPUServer), append(cc, w.CPUClient)
			}
		}
		if perSec[i] >= 0 {
			s.Lag = perSec[i]
		} else if i > 0 {
			s.Lag = p.Seconds[i-1].Lag // no read that second: carry the last one
		}
		p.Seconds = append(p.Seconds, s)
	}
	p.TPS, p.QPS, p.LatP95Ms, p.TPSCV = metrics.Mean(tps), metrics.Mean(qps), metrics.Mean(p95), metrics.CV(tps)
	p.WireBytesPerSUp, p.WireBytesPerSDown = metrics.Mean(up), metrics.Mean(down)
	p.CPUServer, p.CPUClient = metrics.Mean(cs), metrics.Mean(cc)
	if p.LinkRateBps > 0 {
		p.LinkUtilization = math.Max(metrics.Utilization(p.WireBytesPerSUp, p.LinkRateBps),
			metrics.Utilization(p.WireBytesPerSDown, p.LinkRateBps))
	}
}

// bottleneck names what limited replication at this point, in the report's vocabulary.
func bottleneck(p result.Point, bounded bool) string {
	switch {
	case p.Extra["source_limited"] == 1 && p.Extra["cpu_machine"] > 0.85*float64(runtime.NumCPU()):
		return "server-cpu" // the source (and this machine) could not make the load
	case p.Extra["source_limited"] == 1:
		return "latency"
	case !bounded && p.LinkUtilization > 0.85:
		return "network"
	case !bounded:
		return "latency"
	}
	return ""
}

func cpuTotals(ws []metrics.Sample) []float64 {
	out := make([]float64, len(ws))
	for i, w := range ws {
		out[i] = w.CPUTotal
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// watchLag cancels the load once the newest lag reading passes limit.
func watchLag(ctx context.Context, ls *LagSampler, limit time.Duration, cancel context.CancelCauseFunc) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if s, ok := ls.Latest(); ok && s.Lag > limit {
			cancel(errAbortLag)
			return
		}
	}
}

// injectFault drops the replica's link for f.For, f.At into the load.
func (r *Runner) injectFault(ctx context.Context, f Fault) error {
	select {
	case <-ctx.Done():
		return nil
	case <-time.After(f.At):
	}
	restore, err := DropWire(ctx, r.Lab, lab.Replica)
	if err != nil {
		return err
	}
	r.Log.Info("fault: wire to the replica drops everything", "for", f.For)
	select {
	case <-ctx.Done():
	case <-time.After(f.For):
	}
	r.Log.Info("fault: wire restored")
	return restore()
}
