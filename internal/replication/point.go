package replication

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
	"github.com/wirelab/wirelab/internal/study"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// Workload is the study's load: updates, deletes and inserts (DTLE's "增改删").
const Workload = "oltp_write_only"

// QueriesPerTxn is what one oltp_write_only transaction counts as in sysbench's QPS:
// BEGIN, an index update, a non-index update, a delete, an insert, COMMIT. sysbench's
// --rate is in transactions, so loads are whole multiples of it.
const QueriesPerTxn = 6

// errAbortLag is the cause of a load stopped by AbortLag.
var errAbortLag = errors.New("lag passed the abort threshold")

// Measure runs one point: the channel switched to, the replica caught up, then the load
// with the wire sampler, the lag sampler and (for the fault test) the dropped wire, then
// the catch-up and the checksums. An error means the point could not be measured at all;
// a point whose replica did not catch up or whose data differs comes back Failed.
func (r *Study) Measure(ctx context.Context, e *study.Env, c study.Cell) (result.Point, error) {
	ps, ok := c.(PointSpec)
	if !ok {
		return result.Point{}, fmt.Errorf("measure: %T is not a replication point", c)
	}
	r.rtt.Measure(ctx, e, "source")
	p := r.basePoint(e, ps)
	if r.pair.Current() != ps.Channel {
		if err := r.rep.Use(ctx, ps.Channel); err != nil {
			return p, err
		}
	}
	if err := r.settle(ctx); err != nil {
		return p, fmt.Errorf("catch up before the point: %w", err)
	}
	src, rep := r.pair.Source, r.pair.Replica
	bin0, err := r.rep.LogBytes(ctx)
	if err != nil {
		return p, err
	}
	origin := time.Now()
	lagS := StartLagSampler(ctx, r.pair.RepDB, r.dialect, HeartbeatEvery, origin)
	defer lagS.Stop()
	var (
		sb                      *study.Sysbench
		load, catch             time.Duration
		aborted                 bool
		runErr, faultErr, cuErr error
		bin1                    int64
		binErr                  error
	)
	sides := study.Sides{Server: src.Pids, Client: rep.Pids}
	ws, tot, _ := e.Sampled(ctx, sides, func(ctx context.Context) error {
		runCtx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		var wg sync.WaitGroup
		if ps.AbortLag > 0 {
			wg.Go(func() { watchLag(runCtx, lagS, ps.AbortLag, cancel) })
		}
		if ps.Fault != nil {
			wg.Go(func() { faultErr = r.injectFault(runCtx, e, *ps.Fault) })
		}
		conn := src.Conn()
		opts := study.SysbenchTo(conn, sysbench.Options{Workload: Workload, Tables: r.o.Tables, TableSize: r.o.TableSize,
			Threads: r.o.Threads, Time: ps.Duration, Rate: ps.TargetQPS / QueriesPerTxn, RandType: r.o.RandType,
			Socket: conn.Socket, Launcher: e.Backend.Launcher(lab.Server)})
		sb, runErr = study.RunSysbench(runCtx, opts, nil, e)
		load = time.Since(origin)
		aborted = errors.Is(context.Cause(runCtx), errAbortLag)
		cancel(nil)
		wg.Wait()
		bin1, binErr = r.rep.LogBytes(ctx)
		if ctx.Err() == nil {
			catch, cuErr = r.rep.CatchUp(ctx, r.o.CatchUpTimeout)
		}
		return nil
	})
	samples, lagFails := lagS.Stop()
	if ctx.Err() != nil {
		return p, ctx.Err()
	}
	if runErr != nil && !aborted {
		p.Failed, p.FailReason = true, runErr.Error()
	}
	if faultErr != nil {
		p.Failed, p.FailReason = true, faultErr.Error()
	}
	rs := p.Replication
	ls := Analyze(samples, load, ps.Link.RTT(), r.o.Rule)
	fill(&p, sb, ws, samples, load, catch)
	rs.LagMaxS, rs.LagP99S, rs.LagMeanS = ls.MaxS, ls.P99S, ls.MeanS
	rs.LagSlopeSPerS, rs.LagFinalS, rs.LagP99LastHalfS = ls.SlopeSS, ls.FinalS, ls.HalfP99S
	rs.LagSamples, rs.LagReadFailures = ls.N, lagFails
	rs.LoadS, rs.CatchUpS = load.Seconds(), catch.Seconds()
	if binErr == nil {
		rs.BinlogBytes, rs.BinlogMbitS = bin1-bin0, Mbps(bin1-bin0, load)
	}
	rs.WireDownBytesTotal, rs.WireUpBytesTotal = int64(tot.DownBytes), int64(tot.UpBytes)
	if sb != nil && sb.Summary != nil && sb.Summary.Transactions > 0 {
		// Through catch-up: every byte it took to replicate this point's transactions.
		rs.WireBytesPerTxn = float64(tot.DownBytes) / float64(sb.Summary.Transactions)
	}
	if binErr == nil && tot.DownBytes > 0 {
		rs.BinlogToWireRatio = float64(bin1-bin0) / float64(tot.DownBytes)
	}
	rs.CPUMachine = stats.Mean(cpuTotals(ws))
	rs.SourceLimited = ps.TargetQPS > 0 && p.QPS < 0.9*float64(ps.TargetQPS)
	rs.Bounded = ls.Bounded && !aborted
	rs.AbortedEarly = aborted
	if !rs.Bounded {
		why := ls.Why
		if aborted {
			why = fmt.Sprintf("lag passed %s after %.0f s: load stopped early", ps.AbortLag, load.Seconds())
		}
		p.BottleneckWhy = "unbounded lag: " + why
	}
	p.Bottleneck = bottleneck(p)
	if cuErr != nil {
		p.Failed, p.FailReason = true, "replica did not catch up: "+cuErr.Error()
		return p, nil
	}
	if err := r.rep.Verify(ctx); err != nil {
		p.Failed, p.FailReason = true, err.Error()
		return p, nil
	}
	rs.ChecksumOK = true
	r.progress(e, p)
	return p, nil
}

// settle waits until the replica has caught up and stays caught up before a point starts.
// One catch-up that took long leaves the WAL or binlog written meanwhile behind it (a
// PostgreSQL standby re-streams its current WAL segment after a channel switch, and
// autovacuum writes after a heavy point), and a point that starts behind measures the
// backlog, not its load: so catch up again until one catch-up takes under a second.
func (r *Study) settle(ctx context.Context) error {
	deadline := time.Now().Add(r.o.CatchUpTimeout)
	for {
		took, err := r.rep.CatchUp(ctx, time.Until(deadline))
		if err != nil {
			return err
		}
		if took < time.Second {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the replica kept falling behind with no load for %s", r.o.CatchUpTimeout)
		}
	}
}

func (r *Study) basePoint(e *study.Env, ps PointSpec) result.Point {
	p := e.BasePoint("replication", ps.Scenario)
	p.TLS = ps.Channel == Tunnel
	p.Compression = ps.Channel == NativeCompressed || ps.Channel == Tunnel && r.o.Tunnel.Compress != "off"
	p.Transport, p.Channel, p.Workload, p.Threads = "tcp", string(ps.Channel), Workload, r.o.Threads
	p.DurationS = ps.Duration.Seconds()
	p.Replication = &result.ReplicationStats{RTTMs: float64(ps.Link.RTT()) / float64(time.Millisecond),
		TargetQPS: float64(ps.TargetQPS), RTTMeasuredMs: r.rtt.Ms}
	return p
}

// progress prints the point's figures on one line.
func (r *Study) progress(e *study.Env, p result.Point) {
	rs := p.Replication
	bounded := "bounded"
	if !rs.Bounded {
		bounded = "UNBOUNDED"
	}
	e.Progressf("  %-10s %-17s rtt %4.0f ms  %5.0f qps (got %5.0f)  lag max %6.2f s p99 %6.2f s  %s  %s %.2f Mbit/s  wire %.2f Mbit/s  catch-up %.1f s",
		p.Series, p.Channel, rs.RTTMs, rs.TargetQPS, p.QPS, rs.LagMaxS, rs.LagP99S, bounded, TermsFor(r.o.kind()).Log, rs.BinlogMbitS, p.WireMbitS(), rs.CatchUpS)
}

// fill turns sysbench's per-second lines, the wire samples and the lag samples into the
// point's per-second series and averages over the load window. The series goes on through
// the catch-up, so a chart shows lag draining after the load stops.
func fill(p *result.Point, sb *study.Sysbench, ws []metrics.Sample, lags []LagSample, load, catch time.Duration) {
	var ticks []study.Tick
	if sb != nil {
		ticks = sb.Ticks()
		if sb.Summary != nil {
			p.Errors, p.Reconnects = sb.Summary.Errors, sb.Summary.Reconnects
		}
	}
	secs := int(math.Ceil((load + catch).Seconds()))
	study.FillSeries(p, ticks, ws, study.Window{End: load, MinSeconds: secs})
	perSec := PerSecond(lags, len(p.Seconds))
	for i := range p.Seconds {
		switch {
		case perSec[i] >= 0:
			p.Seconds[i].Lag = perSec[i]
		case i > 0:
			p.Seconds[i].Lag = p.Seconds[i-1].Lag // no read that second: carry the last one
		}
	}
}

// bottleneck names what limited replication at this point, in the report's vocabulary.
func bottleneck(p result.Point) string {
	rs := p.Replication
	switch {
	case rs.SourceLimited && rs.CPUMachine > 0.85*float64(runtime.NumCPU()):
		return "server-cpu" // the source (and this machine) could not make the load
	case rs.SourceLimited:
		return "latency"
	case !rs.Bounded && p.LinkUtilization > 0.85:
		return "network"
	case !rs.Bounded:
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

func itoa(n int) string { return strconv.Itoa(n) }

// watchLag cancels the load once the newest lag reading passes limit.
func watchLag(ctx context.Context, ls *LagSampler, limit time.Duration, cancel context.CancelCauseFunc) {
	tick(ctx, 250*time.Millisecond, func() bool {
		if s, ok := ls.Latest(); ok && s.Lag > limit {
			cancel(errAbortLag)
			return false
		}
		return true
	})
}

// injectFault drops the replica's link for f.For, f.At into the load: the backend's own
// drop (study.WireDropper: the lab's rule on its wire host, or rules on the replica's
// host).
func (r *Study) injectFault(ctx context.Context, e *study.Env, f Fault) error {
	select {
	case <-ctx.Done():
		return nil
	case <-time.After(f.At):
	}
	var restore func() error
	var err error
	if f.Inject != nil {
		restore, err = f.Inject(ctx)
	} else if d, ok := e.Backend.(study.WireDropper); ok {
		restore, err = d.DropWire(ctx, lab.Replica)
	} else {
		err = errors.New("fault: this backend cannot drop the wire")
	}
	if err != nil {
		return err
	}
	r.e.Logger.Info("fault: "+f.what(), "for", f.For)
	select {
	case <-ctx.Done():
	case <-time.After(f.For):
	}
	return restore()
}
