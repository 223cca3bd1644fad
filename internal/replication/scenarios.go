package replication

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// errInterrupted ends the scenarios after the first Ctrl-C; it is not reported as an error.
var errInterrupted = fmt.Errorf("interrupted")

// scenarios runs the chosen scenarios in order. The first interrupt (soft) stops after the
// current point; the second (hard) aborts it.
func (r *Runner) scenarios(soft, hard context.Context) error {
	for _, n := range r.Opts.Scenarios {
		var err error
		switch n {
		case 1:
			err = r.lagVsRTT(soft, hard)
		case 2:
			err = r.maxLoad(soft, hard)
		case 3:
			err = r.bandwidth(soft, hard)
		case 4:
			err = r.faults(soft, hard)
		}
		if err == errInterrupted || hard.Err() != nil {
			r.run.Interrupted = true
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// point measures one point and records it; errInterrupted when Ctrl-C came before it.
func (r *Runner) point(soft, hard context.Context, ps PointSpec) (result.Point, error) {
	if soft.Err() != nil {
		return result.Point{}, errInterrupted
	}
	p, err := r.Measure(hard, ps)
	if err != nil {
		if hard.Err() != nil {
			return p, errInterrupted
		}
		// The point could not even be measured (e.g. the channel would not connect): keep
		// it as failed and go on; a broken lab shows up again on the next point.
		p.Failed, p.FailReason = true, err.Error()
		if p.Extra == nil {
			p.Extra = map[string]float64{}
		}
		p.Extra["checksum_ok"], p.Extra["bounded"] = 0, 0
		r.Log.Warn("point failed", "scenario", ps.Scenario, "channel", ps.Channel, "qps", ps.TargetQPS, "err", err)
	}
	return p, r.add(p)
}

// lagVsRTT is DTLE's scenario 1: fixed load, growing RTT, highest and p99 lag per channel.
func (r *Runner) lagVsRTT(soft, hard context.Context) error {
	for _, rtt := range r.Opts.RTTs {
		if soft.Err() != nil {
			return errInterrupted
		}
		if err := r.shape(hard, link.Condition{RateBps: r.Opts.RateCapBps, Delay: rtt / 2}); err != nil {
			return err
		}
		for _, ch := range r.Opts.Channels {
			if _, err := r.point(soft, hard, PointSpec{Scenario: LagVsRTT, Channel: ch, TargetQPS: r.Opts.LagQPS,
				Duration: r.Opts.Duration, AbortLag: r.Opts.AbortLag}); err != nil {
				return err
			}
		}
	}
	return nil
}

// maxLoad is DTLE's scenario 2: per channel, the highest load whose lag stays bounded.
func (r *Runner) maxLoad(soft, hard context.Context) error {
	if err := r.shape(hard, link.Condition{RateBps: r.Opts.RateCapBps, Delay: r.Opts.Delay}); err != nil {
		return err
	}
	start := r.searchStart()
	for _, ch := range r.Opts.Channels {
		s := &Search{Start: start, Factor: r.Opts.SearchFactor, Min: QueriesPerTxn * 10, Max: float64(r.Opts.SearchMaxQPS),
			Bisect: r.Opts.SearchBisect, Step: QueriesPerTxn}
		idx := map[float64]int{} // load -> index in run.Points
		for q, ok := s.Next(); ok; q, ok = s.Next() {
			r.progress("max-load %s: probing %.0f qps", ch, q)
			p, err := r.point(soft, hard, PointSpec{Scenario: MaxLoad, Channel: ch, TargetQPS: int(q),
				Duration: r.Opts.SearchDuration, AbortLag: r.Opts.AbortLag})
			if err != nil {
				return err
			}
			idx[q] = len(r.run.Points) - 1
			ok := !p.Failed && p.Extra["bounded"] == 1 && p.Extra["checksum_ok"] == 1
			s.Record(q, ok, p.Extra["source_limited"] == 1)
		}
		// Mark the pair the lag-over-time chart compares, and say what was found.
		best, first := s.Best(), s.FirstUnbounded()
		if i, ok := idx[best]; ok {
			r.run.Points[i].Extra["search_last_bounded"] = 1
		}
		if i, ok := idx[first]; ok {
			r.run.Points[i].Extra["search_first_unbounded"] = 1
		}
		msg := fmt.Sprintf("max-load %s: highest bounded target %.0f QPS", ch, best)
		if i, ok := idx[best]; ok {
			bp := r.run.Points[i]
			msg += fmt.Sprintf(" (achieved %.0f QPS, binlog %.2f Mbit/s, wire %.2f Mbit/s)", bp.QPS, bp.Extra["binlog_mbit_s"], bp.Extra["wire_mbit_s"])
		}
		switch {
		case first > 0:
			msg += fmt.Sprintf("; lowest unbounded %.0f QPS", first)
		case s.Limited():
			msg += "; the source could not deliver more (CPU), so this is a lower bound"
		default:
			msg += fmt.Sprintf("; no unbounded load up to the search's ceiling %d QPS", r.Opts.SearchMaxQPS)
		}
		r.note("%s.", msg)
		r.progress("%s", msg)
	}
	return result.Write(r.Opts.OutDir, r.run)
}

// searchStart puts the first probe at about half of native replication's capacity,
// estimated from the binlog bytes per query measured so far (1 000 QPS of this workload
// writes a known number of binlog bytes); 300 QPS (the study's load) without a measurement.
func (r *Runner) searchStart() float64 {
	var bytes, queries float64
	for _, p := range r.run.Points {
		if p.Failed || p.QPS <= 0 || p.Extra["binlog_bytes"] <= 0 {
			continue
		}
		bytes += p.Extra["binlog_bytes"]
		queries += p.QPS * p.Extra["load_s"]
	}
	if queries == 0 || r.Opts.RateCapBps == 0 {
		return 300
	}
	capQPS := float64(r.Opts.RateCapBps) / 8 / (bytes / queries)
	return math.Max(QueriesPerTxn*10, math.Round(capQPS/2/QueriesPerTxn)*QueriesPerTxn)
}

// bandwidth is DTLE's scenario 3: no rate cap, a sweep of loads, wire bytes per channel.
func (r *Runner) bandwidth(soft, hard context.Context) error {
	if err := r.shape(hard, link.Condition{Delay: r.Opts.Delay}); err != nil {
		return err
	}
	for _, ch := range r.Opts.Channels {
		for _, q := range r.Opts.Loads {
			if _, err := r.point(soft, hard, PointSpec{Scenario: Bandwidth, Channel: ch, TargetQPS: q,
				Duration: r.Opts.Duration, AbortLag: r.Opts.AbortLag}); err != nil {
				return err
			}
		}
	}
	return nil
}

// faults drops the replica's link mid-load on every channel: replication must resume by
// itself and the checksums must match afterwards.
func (r *Runner) faults(soft, hard context.Context) error {
	if err := r.shape(hard, link.Condition{RateBps: r.Opts.RateCapBps, Delay: r.Opts.Delay}); err != nil {
		return err
	}
	f := r.Opts.Fault
	for _, ch := range r.Opts.Channels {
		if _, err := r.point(soft, hard, PointSpec{Scenario: FaultRun, Channel: ch, TargetQPS: r.Opts.LagQPS,
			Duration: r.Opts.Duration, Fault: &f}); err != nil {
			return err
		}
	}
	r.note("fault: on every channel the wire to the replica dropped every packet for %s, %s into the load (iptables DROP in the wire host); "+
		"each fault point passes when the replica caught up by itself and CHECKSUM TABLE matched.", f.For, f.At)
	return nil
}

// spec is what results.json records the user asked for.
func (o Options) spec() result.Spec {
	var series, rtts, loads, chans []string
	for _, n := range o.Scenarios {
		series = append(series, ScenarioNames[n])
	}
	for _, d := range o.RTTs {
		rtts = append(rtts, d.String())
	}
	for _, q := range o.Loads {
		loads = append(loads, strconv.Itoa(q))
	}
	for _, c := range o.Channels {
		chans = append(chans, string(c))
	}
	return result.Spec{Workload: Workload, Threads: []int{o.Threads}, DurationS: o.Duration.Seconds(), Repeat: 1,
		Tables: o.Tables, TableSize: o.TableSize, Series: series, LinkRateBps: o.RateCapBps,
		LinkDelayMs: float64(o.Delay) / float64(time.Millisecond),
		Extra: map[string]string{"channels": strings.Join(chans, ","), "rtts": strings.Join(rtts, ","),
			"lag_qps": strconv.Itoa(o.LagQPS), "loads_qps": strings.Join(loads, ","),
			"search_duration": o.SearchDuration.String(), "search_factor": strconv.FormatFloat(o.SearchFactor, 'g', -1, 64),
			"search_bisect": strconv.Itoa(o.SearchBisect), "abort_lag": o.AbortLag.String(),
			"tunnel_compress": o.TunnelCompress, "tunnel_level": strconv.Itoa(o.TunnelLevel), "rand_type": o.RandType,
			"bounded_rule": o.Rule.String()}}
}

// notes are the study's rules, stated once in results.json and the report.
func (o Options) notes() []string {
	return []string{
		"Bounded-lag rule: " + o.Rule.String() + ". A probe whose lag passes " + o.AbortLag.String() +
			" is stopped early and counts as unbounded.",
		"Lag is measured, not read from Seconds_Behind_Master: a heartbeat row on the source is set to this process's clock every 100 ms " +
			"and read on the replica every 100 ms; lag = now − the timestamp the replica has applied (one machine, one clock). " +
			"The heartbeat adds ten small transactions per second to the binlog of every channel.",
		fmt.Sprintf("QPS is sysbench's count: an %s transaction is %d queries (BEGIN, two updates, a delete, an insert, COMMIT); "+
			"the load is open loop (sysbench --rate = QPS ÷ %d transactions/s, %d threads) and runs in the server host over the unix socket, "+
			"so the wire carries only replication.", Workload, QueriesPerTxn, QueriesPerTxn, o.Threads),
		"wire_mbit_s is the source→replica direction (transmit counter of the wire host's interface facing the replica) averaged over the load window; " +
			"the replica→source direction is wire_up_mbit_s. binlog_mbit_s is the growth of the source's binlog files over the same window.",
		fmt.Sprintf("max-load search: probes climb by ×%g from about half of native's estimated capacity until lag is unbounded, then %d bisection steps; "+
			"a probe the source could not deliver (achieved < 90%% of target) ends the climb.", o.SearchFactor, o.SearchBisect),
		fmt.Sprintf("After every point the replica must catch up (within %s) and CHECKSUM TABLE of every sbtest table must match the source, or the point is failed.", o.CatchUpTimeout),
		fmt.Sprintf("Channels: native = CHANGE MASTER to the source across the wire; native-compressed = the same with slave_compressed_protocol=ON; "+
			"tunnel = CHANGE MASTER to a wirelab tunnel entry on the replica's loopback, exit next to the source (--compress %s, mutual TLS). "+
			"All use MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1, slave_net_timeout=10.", o.TunnelCompress),
	}
}
