package replication

import (
	"context"
	"fmt"
	"github.com/wirelab/wirelab/internal/engine"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
)

// Scenario names, as Point.Series.
const (
	LagVsRTT  = "lag-vs-rtt"
	MaxLoad   = result.MaxLoadSeries
	Bandwidth = "bandwidth"
	FaultRun  = "fault"
)

// ScenarioNames maps --scenarios numbers to series names (4, the fault run, is opt-in).
var ScenarioNames = map[int]string{1: LagVsRTT, 2: MaxLoad, 3: Bandwidth, 4: FaultRun}

// Options is the whole study, validated by the CLI.
type Options struct {
	Channels       []Channel
	Scenarios      []int
	Link           link.Condition  // the wire of scenarios 2 and 4; scenario 1 varies its delay, 3 lifts its rate cap
	Shaper         string          // how delay is made ("" = auto)
	RTTs           []time.Duration // scenario 1
	LagQPS         int             // scenario 1 (and 4) load
	Loads          []int           // scenario 3 loads (QPS)
	Duration       time.Duration   // load window of scenarios 1, 3 and 4
	SearchDuration time.Duration   // load window of each scenario 2 probe
	SearchFactor   float64
	Precision      float64 // scenario 2: the bracket's width at which the search confirms and stops
	SearchMaxQPS   int
	AbortLag       time.Duration
	CatchUpTimeout time.Duration
	Tables         int
	TableSize      int
	Threads        int
	RandType       string
	BufferPool     string
	Tunnel         lab.TunnelOptions
	CheckWire      bool
	Rule           Rule
	Fault          Fault
}

// maxProbes bounds one channel's max-load search.
const maxProbes = 14

// Study is the replication study as a plug-in of study.Session: a source in the server
// host, a replica behind the wire, and the scenarios' points one at a time.
type Study struct {
	o    Options
	pair *Pair
	hb   *Heartbeat

	// The scenarios run as a sequence the Session pulls point by point; done is every
	// point measured so far, so a search can read its last result.
	next    func() (PointSpec, bool)
	stop    func()
	done    []result.Point
	rttCond *link.Condition // the wire the last RTT probe measured
	rttMs   float64
	e       *study.Env
}

// New returns the study for o.
func New(o Options) *Study { return &Study{o: o} }

// Name is "replication".
func (r *Study) Name() string { return "replication" }

// Needs is a replica and a server host, a MariaDB in each with binlogs and GTIDs, and the
// data set prepared on the source (the replica gets it by replication).
func (r *Study) Needs() study.Needs {
	o := r.o
	return study.Needs{
		Hosts: []string{lab.Replica, lab.Server},
		Servers: []study.Server{
			{Host: lab.Server, DB: lab.DBOptions{BufferPool: o.BufferPool, ServerID: 1, LogBin: true}},
			// slave_net_timeout: the IO thread notices a dead connection in 10 s instead of
			// 60, so a dropped wire heals quickly (MASTER_CONNECT_RETRY is 1 s).
			{Host: lab.Replica, DB: lab.DBOptions{BufferPool: o.BufferPool, ServerID: 2, LogBin: true,
				Extra: map[string]string{"slave_net_timeout": "10"}}},
		},
		Data:      study.DataSet{Workload: Workload, Tables: o.Tables, TableSize: o.TableSize},
		Shaper:    o.Shaper,
		CheckWire: o.CheckWire,
		Spec:      o.spec(),
		Notes:     o.notes(),
	}
}

// Setup starts replication over the native channel from the source's first binlog event,
// lets it copy the data set, checks the copy and starts the heartbeat.
func (r *Study) Setup(ctx context.Context, e *study.Env) error {
	r.e = e
	src, ok1 := e.Servers[0].(*engine.MariaDBServer)
	rep, ok2 := e.Servers[1].(*engine.MariaDBServer)
	if !ok1 || !ok2 {
		return fmt.Errorf("replication: the source and the replica must be MariaDB servers, got %s and %s", e.Servers[0].Kind(), e.Servers[1].Kind())
	}
	p := &Pair{Lab: e.Lab, Source: src.Server, Replica: rep.Server, Tables: Tables(r.o.Tables), Self: e.Self,
		Tunnel: r.o.Tunnel, Log: e.Logger.With("component", "replication")}
	r.pair = p
	var err error
	if p.SrcDB, err = Open(src.Server); err != nil {
		return err
	}
	if p.RepDB, err = Open(rep.Server); err != nil {
		return err
	}
	if err := CreateHeartbeat(ctx, p.SrcDB); err != nil {
		return err
	}
	t0 := time.Now()
	if err := p.Start(ctx, r.o.CatchUpTimeout); err != nil {
		return err
	}
	e.Note("The replica was built by replication itself: the source's binlog from its first event (GTID, empty slave position), "+
		"sysbench prepare included; CHECKSUM TABLE of all %d tables matched before the first point (copy took %s over the unshaped wire).",
		r.o.Tables, time.Since(t0).Round(100*time.Millisecond))
	e.Progressf("replica caught up, %d tables match", r.o.Tables)
	r.hb = StartHeartbeat(ctx, p.SrcDB, HeartbeatEvery, e.Logger)
	r.next, r.stop = iter.Pull(r.plan)
	return nil
}

// Next is the scenarios' next point.
func (r *Study) Next(done []result.Point) (study.Cell, bool) {
	r.done = done
	ps, ok := r.next()
	if !ok {
		return nil, false
	}
	return ps, true
}

// last is the point measured for the PointSpec the plan yielded last.
func (r *Study) last() result.Point {
	if len(r.done) == 0 {
		return result.Point{}
	}
	return r.done[len(r.done)-1]
}

// Finish adds the headline figures to the notes.
func (r *Study) Finish(run *result.Run) {
	run.Notes = append(run.Notes, Headlines(run.Points)...)
}

// Headlines are the study's headline sentences (printed at the end of a run).
func (r *Study) Headlines(pts []result.Point) []string { return Headlines(pts) }

// Teardown stops the scenario sequence and the heartbeat and closes the SQL handles.
func (r *Study) Teardown() {
	if r.stop != nil {
		r.stop()
		r.stop = nil
	}
	if r.hb != nil {
		r.hb.Stop()
		r.hb = nil
	}
	if r.pair != nil {
		r.pair.Close()
		r.pair = nil
	}
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
		Tables: o.Tables, TableSize: o.TableSize, Series: series, LinkRateBps: o.Link.RateBps,
		LinkDelayMs: float64(o.Link.Delay) / float64(time.Millisecond),
		Extra: map[string]string{"channels": strings.Join(chans, ","), "rtts": strings.Join(rtts, ","),
			"lag_qps": strconv.Itoa(o.LagQPS), "loads_qps": strings.Join(loads, ","),
			"search_duration": o.SearchDuration.String(), "search_factor": strconv.FormatFloat(o.SearchFactor, 'g', -1, 64),
			"search_precision": strconv.FormatFloat(o.Precision, 'g', -1, 64), "abort_lag": o.AbortLag.String(),
			"tunnel_compress": o.Tunnel.Compress, "tunnel_level": strconv.Itoa(o.Tunnel.Level), "tunnel_mux": o.Tunnel.Mux, "rand_type": o.RandType,
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
		"wire Mbit/s is the source→replica direction (transmit counter of the wire host's interface facing the replica) averaged over the load window; " +
			"binlog Mbit/s is the growth of the source's binlog files over the same window.",
		fmt.Sprintf("max-load search: per channel, the first probe is 85%% of the capacity its earlier points predict (the link's rate ÷ the wire bytes one query took), "+
			"probes climb by ×%g until one fails, bisect until the bracket between the highest passing and the lowest failing load is within %.0f%% of the limit, "+
			"and the limit is confirmed by a second run (a failed confirmation moves it down); a passing probe the source could not deliver (achieved < 90%% of target) ends the search.",
			o.SearchFactor, 100*o.Precision),
		fmt.Sprintf("After every point the replica must catch up (within %s) and CHECKSUM TABLE of every sbtest table must match the source, or the point is failed.", o.CatchUpTimeout),
		fmt.Sprintf("Channels: native = CHANGE MASTER to the source across the wire; native-compressed = the same with slave_compressed_protocol=ON; "+
			"tunnel = CHANGE MASTER to a wirelab tunnel entry on the replica's loopback, exit next to the source (--compress %s, --mux %s, mutual TLS). "+
			"All use MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1, slave_net_timeout=10.", o.Tunnel.Compress, o.Tunnel.Mux),
	}
}
