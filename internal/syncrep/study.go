package syncrep

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/pgbench"
	"github.com/wirelab/wirelab/internal/replication"
	"github.com/wirelab/wirelab/internal/report"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
)

// Name is the study's name in results.json and the report.
const Name = "sync"

// Study is the sync study as a plug-in of study.Session: RTT outermost (a wire change
// is the slowest step), then mode, then threads.
type Study struct {
	study.Cells[cell]
	o Options

	pair *replication.Pair
	rep  replication.Replicator
	t    *Target
	// applied is the mode and wire the pair is in; a cell with another one applies its mode.
	applied string
	rtt     replication.RTTProbe
}

// cell is one point: a closed-loop cell of the study's workload, its mode and RTT.
type cell struct {
	study.LoadCell
	mode Mode
	rtt  time.Duration
}

// Label names the point in progress lines.
func (c cell) Label() string {
	return fmt.Sprintf("%s rtt=%s threads=%d", c.mode.Name(), c.rtt, c.Threads)
}

// New returns the study for o (validated).
func New(o Options) *Study {
	s := &Study{o: o}
	var pairModes []Mode
	for _, m := range o.Modes {
		if !isGalera(m) {
			pairModes = append(pairModes, m)
		}
	}
	for _, rtt := range o.RTTs {
		s.addModes(pairModes, rtt)
	}
	// Each Galera mode is a cluster of its own, started once: they come after every Pair
	// mode (the Pair's servers are stopped for them), mode outermost.
	for _, m := range o.Modes {
		if isGalera(m) {
			for _, rtt := range o.RTTs {
				s.addModes([]Mode{m}, rtt)
			}
		}
	}
	return s
}

// addModes appends the cells of modes at rtt, threads innermost.
func (s *Study) addModes(modes []Mode, rtt time.Duration) {
	o := s.o
	w := o.Link.AtRTT(rtt)
	for _, m := range modes {
		for _, th := range o.Threads {
			wire := w
			s.Add(cell{mode: m, rtt: rtt, LoadCell: study.LoadCell{Study: Name, Series: m.Name(),
				Workload: o.Workload, Threads: th, Duration: o.Duration, Warmup: o.Warmup,
				Transport: "socket", Channel: "native", ClientHost: lab.Server, Link: &wire}})
		}
	}
}

// Name is "sync".
func (s *Study) Name() string { return Name }

// data is the driver's data set, prepared on the primary and carried to the replica by
// replication: sysbench's tables, or pgbench's at --scale.
func (s *Study) data() study.DataSet {
	if s.o.Pgbench() {
		return study.DataSet{Driver: study.DriverPgbench, Workload: s.o.Workload, Scale: s.o.Scale}
	}
	return study.DataSet{Driver: study.DriverSysbench, Workload: s.o.Workload, Tables: s.o.Tables, TableSize: s.o.TableSize}
}

// tables are the data set's tables, which the replica's checks compare.
func (s *Study) tables() []replication.Table {
	if s.o.Pgbench() {
		return replication.PgbenchTables()
	}
	return replication.SysbenchTables(s.o.Tables)
}

// repOptions are the replication Pair's knobs.
func (s *Study) repOptions() replication.Options {
	return replication.Options{Engine: s.o.kind(), BufferPool: s.o.BufferPool, CatchUpTimeout: s.o.CatchUpTimeout}
}

// Needs is the replica across the wire from the server host, the replication Pair's
// servers and the data set on the primary.
func (s *Study) Needs() study.Needs {
	servers, _ := replication.ServersFor(s.repOptions())
	return study.Needs{
		Hosts:     []string{lab.Replica, lab.Server},
		Servers:   servers,
		Data:      s.data(),
		Condition: s.o.Link,
		Shaper:    s.o.Shaper,
		CheckWire: s.o.CheckWire,
		Spec:      s.spec(),
		Notes:     s.notes(),
	}
}

// spec is what results.json records of the options.
func (s *Study) spec() result.Spec {
	o := s.o
	d := s.data()
	sp := result.Spec{Workload: o.Workload, Threads: o.Threads, DurationS: o.Duration.Seconds(), WarmupS: o.Warmup.Seconds(),
		Repeat: 1, Tables: d.Tables, TableSize: d.TableSize, Scale: d.Scale, Series: Names(o.Modes), LinkRateBps: o.Link.RateBps,
		Driver: d.Driver, Extra: map[string]string{"engine": string(o.kind()), "rtts": durations(o.RTTs)}}
	if o.TargetTPS > 0 {
		sp.Extra["target_tps"] = strconv.FormatFloat(o.TargetTPS, 'f', -1, 64)
	}
	if hasSemiSync(o.Modes) {
		sp.Extra["semisync_timeout"] = o.SemiSyncTimeout.String()
	}
	return sp
}

// hasSemiSync says whether a semi-sync mode is among ms (its timeout then matters).
func hasSemiSync(ms []Mode) bool {
	return slices.ContainsFunc(ms, func(m Mode) bool { _, ok := m.(semiSync); return ok })
}

// durations is ds as --rtts spells them.
func durations(ds []time.Duration) string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.String()
	}
	return strings.Join(out, ",")
}

// notes say where everything runs, for the report.
func (s *Study) notes() []string {
	notes := []string{
		"the primary and the load driver share the server host: the driver reaches the primary over its unix socket, unshaped; the wire is shaped between the primary and the replica",
		"commit latency is the transaction's latency as the driver sees it: of a transaction only the commit's wait for the replica crosses the wire",
		"wire up = replica → primary (acknowledgements), down = primary → replica (the log); CPU server = primary and driver, client = replica",
	}
	if !s.o.Pgbench() {
		return notes
	}
	notes = append(notes, fmt.Sprintf("pgbench %s on pgbench -i's tables at scale %d (%d accounts), initialised on the primary and streamed to the standby; "+
		"each transaction ends in one commit, and the commit percentiles are read from pgbench's per-transaction log (warm-up left out); "+
		"after every point the standby catches up and each pgbench table's row count and md5 of every row must match",
		s.o.Workload, s.o.Scale, s.o.Scale*100_000))
	if s.o.Workload == pgbench.TPCB {
		notes = append(notes, fmt.Sprintf("tpcb-like updates one of %d branch rows in every transaction and holds its lock until the commit returns, "+
			"the wait for the standby included: with more threads than branches, transactions also queue for branch rows "+
			"(pgbench's advice is a scale of at least the clients; simple-update has no such row)", s.o.Scale))
	}
	return notes
}

// Setup makes the replica a copy that follows the primary (replication's Start: the
// binlog replayed from its start, or a base backup across the wire) and checks it.
func (s *Study) Setup(ctx context.Context, e *study.Env) error {
	tables := s.tables()
	p, rep, err := replication.OpenPair(ctx, e, s.repOptions(), tables)
	if err != nil {
		return err
	}
	s.pair, s.rep = p, rep
	s.t = &Target{Pair: p, SemiSyncTimeout: s.o.SemiSyncTimeout}
	if err := rep.Start(ctx, s.o.CatchUpTimeout); err != nil {
		return fmt.Errorf("start replication: %w", err)
	}
	e.Progressf("replica caught up, %d tables match", len(tables))
	return nil
}

// Finish adds nothing: the report's sync section draws the findings from the points,
// and the CLI prints them (Headlines).
func (s *Study) Finish(*result.Run) {}

// Headlines are the findings (printed at the end of a run).
func (s *Study) Headlines(pts []result.Point) []string {
	return report.SyncFindings(pts, s.o.TargetTPS)
}

// Teardown closes the SQL handles and stops a running Galera cluster; the other servers
// go with the lab.
func (s *Study) Teardown() {
	if s.pair != nil {
		s.pair.Close()
		s.pair = nil
	}
	_ = s.closeGalera(context.Background())
}
