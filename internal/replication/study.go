package replication

import (
	"context"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
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
	Engine         engine.Kind // the source's and the replica's engine; "" = MariaDB
	Channels       []Channel
	Scenarios      []int
	Link           link.Condition  // the wire of scenarios 2 and 4; scenario 1 varies its delay, 3 lifts its rate cap
	Shaper         link.Shaper     // how delay is made ("" = auto)
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

// maxProbes bounds one channel's max-load search; edgeProbes bounds the probes it places
// at the fitted limit once a failure lies above a pass. Against outcomes that scatter a few
// percent around the limit, five such probes keep the answer within ±5% of the true limit in
// 95% of searches for under 30% more probes than bisecting the bracket (search_sim_test.go).
const (
	maxProbes  = 14
	edgeProbes = 5
)

// Study is the replication study as a plug-in of study.Session: a source in the server
// host, a replica behind the wire, and the scenarios' points one at a time.
type Study struct {
	o       Options
	pair    *Pair
	rep     Replicator
	dialect Dialect
	hb      *Heartbeat

	// The scenarios run as a sequence the Session pulls point by point; done is every
	// point measured so far, so a search can read its last result.
	next func() (PointSpec, bool)
	stop func()
	done []result.Point
	rtt  RTTProbe
	e    *study.Env
}

// New returns the study for o.
func New(o Options) *Study { return &Study{o: o} }

// Name is "replication".
func (r *Study) Name() string { return "replication" }

// Needs is a replica and a server host, the engine's servers (MariaDB: a source and an
// empty replica with binlogs and GTIDs; PostgreSQL: the primary, its standby comes in
// Setup) and the data set prepared on the source.
func (r *Study) Needs() study.Needs {
	o := r.o
	var servers []study.Server
	if b, err := o.backend(); err == nil {
		servers = b.servers(o)
	}
	return study.Needs{
		Hosts:     []string{lab.Replica, lab.Server},
		Servers:   servers,
		Data:      study.DataSet{Workload: Workload, Tables: o.Tables, TableSize: o.TableSize},
		Shaper:    o.Shaper,
		CheckWire: o.CheckWire,
		Tunnel:    slices.Contains(o.Channels, Tunnel),
		Programs:  o.programs(),
		Spec:      o.spec(),
		Notes:     o.notes(),
	}
}

// programs are what the study runs on its hosts besides the servers and sysbench: the
// fault's iptables on the replica's host (a backend on other machines drops the wire
// there; the lab's rule is on its own wire host).
func (o Options) programs() []study.Program {
	if !slices.Contains(o.Scenarios, 4) {
		return nil
	}
	return []study.Program{{Host: lab.Replica, Name: "iptables", Why: "--scenarios 4 drops the wire with an iptables rule"}}
}

// Setup makes the replica a copy that follows the source over the native channel (the
// engine's way: replaying the binlog from its first event, or a base backup across the
// wire), checks the copy, records the servers' settings and starts the heartbeat.
func (r *Study) Setup(ctx context.Context, e *study.Env) error {
	r.e = e
	b, err := r.o.backend()
	if err != nil {
		return err
	}
	p, rep, err := OpenPair(ctx, e, r.o, SysbenchTables(r.o.Tables))
	if err != nil {
		return err
	}
	r.pair, r.rep, r.dialect = p, rep, b.dialect
	if p.Planned { // a dry run: the replication's commands are printed, no heartbeat runs
		if err := r.rep.Start(ctx, r.o.CatchUpTimeout); err != nil {
			return err
		}
		r.next, r.stop = iter.Pull(r.plan)
		return nil
	}
	if err := CreateHeartbeat(ctx, p.SrcDB, r.dialect); err != nil {
		return err
	}
	t0 := time.Now()
	if err := r.rep.Start(ctx, r.o.CatchUpTimeout); err != nil {
		return err
	}
	e.Note("%s", r.o.copyNote(time.Since(t0)))
	r.noteServers(ctx, e)
	e.Progressf("replica caught up, %d tables match", r.o.Tables)
	r.hb = StartHeartbeat(ctx, p.SrcDB, r.dialect, HeartbeatEvery, e.Logger)
	r.next, r.stop = iter.Pull(r.plan)
	return nil
}

// noteServers records each server's version and the settings that shape replication
// (wal_compression, synchronous_commit, ... on PostgreSQL) in the notes.
func (r *Study) noteServers(ctx context.Context, e *study.Env) {
	for _, s := range []struct {
		role string
		srv  engine.Server
	}{{"source", r.pair.Source}, {"replica", r.pair.Replica}} {
		f, err := s.srv.Facts(ctx)
		if err != nil {
			e.Logger.Warn("read server settings", "server", s.role, "err", err)
			continue
		}
		e.Note("%s", factsNote(s.role, f))
	}
}

// factsNote is "source: PostgreSQL 15.8 (...); wal_compression=off, ...".
func factsNote(role string, f engine.Facts) string {
	var kv []string
	for _, s := range f.Settings {
		kv = append(kv, s.Name+"="+s.Value)
	}
	return role + ": " + f.Version + "; " + strings.Join(kv, ", ")
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

// Finish adds the headline figures to the notes and each channel's maximum sustainable
// load to the run.
func (r *Study) Finish(run *result.Run) {
	run.Notes = append(run.Notes, r.Headlines(run.Points)...)
	run.MaxLoads = result.MaxLoads(run.Points)
}

// Headlines are the study's headline sentences (printed at the end of a run).
// Their ratios are read within the run's margin (set before Setup; the default before).
func (r *Study) Headlines(pts []result.Point) []string {
	var run *result.Run
	if r.e != nil {
		run = r.e.Run
	}
	return Headlines(TermsFor(r.o.kind()), pts, result.MarginOf(run).Stats())
}

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
