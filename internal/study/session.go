package study

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/pgbench"
	"github.com/wirelab/wirelab/internal/procfs"
	"github.com/wirelab/wirelab/internal/report"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// Session runs one Study on a fresh lab and removes the lab afterwards.
type Session struct {
	Runner   execx.Runner
	Logger   *slog.Logger
	StateDir string
	LockDir  string // the machine's measurement lock; "" = StateDir
	Self     string
	Progress io.Writer // progress lines: point k, the wire, an ETA
	CPUIdle  string    // what was done about CPU idle states, for the environment
	OutDir   string
	Command  string // the wirelab subcommand, e.g. "study bandwidth": names the lock holder and lab owner
	NoWait   bool   // fail instead of waiting when another measurement holds the machine
	// Open builds the machines the study runs on; nil is a fresh namespace lab.
	Open Opener
	// Margin is what the run's verdicts are judged with, recorded in its spec (zero: the
	// default).
	Margin result.Margin
	// Proc is this machine's /proc (its zero value is): the load average, and the lab's.
	Proc procfs.FS
	// Metrics gets each point's seconds while it is measured (--metrics-listen); nil = none.
	Metrics Publisher
}

// Run builds the lab the study needs, starts its servers and prepares the data set once,
// runs the study's Setup, measures its points one at a time (results.json is rewritten
// after each, so finished points survive anything), renders the report, keeps the
// tunnel's logs beside it (logs.go) and removes the lab. soft cancelled = stop after the
// current point; hard = abort it and tear down now.
func (s *Session) Run(soft, hard context.Context, st Study) (run *result.Run, err error) {
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if s.Progress == nil {
		s.Progress = io.Discard
	}
	needs := st.Needs()
	if len(needs.Hosts) == 0 || len(needs.Servers) == 0 {
		return nil, fmt.Errorf("study %s: needs at least one host across the wire and one server", st.Name())
	}
	run = &result.Run{Schema: result.Schema, Tool: "wirelab", Study: st.Name(),
		Started: time.Now().UTC(), Spec: needs.Spec, Notes: needs.Notes}
	margin := s.Margin
	if margin.Value <= 0 {
		margin = result.DefaultMargin()
	}
	run.Spec.Margin = &margin
	// One measurement at a time: the machine lock is held from before the lab is built
	// until after it is torn down (deferred first, released last); the lab records this
	// process as its owner. A first Ctrl-C stops the wait.
	claim, err := lab.ClaimMachine(soft, lab.ClaimOptions{LockDir: s.LockDir, StateDir: s.StateDir, Command: s.Command,
		NoWait: s.NoWait, Progress: s.Progress, Runner: s.Runner})
	if err != nil {
		return nil, err
	}
	defer claim.Release()
	open := s.Open
	if open == nil {
		open = s.LabOpener()
	}
	b, err := open(hard, needs, claim.Owner)
	if err != nil {
		return nil, err
	}
	run.RunID = b.ID()
	if err := claim.SetLab(b.ID()); err != nil {
		s.Logger.Warn("name the lab in the machine lock", "err", err)
	}
	e := &Env{Backend: b, Logger: s.Logger, Self: s.Self, Run: run, Far: needs.Hosts[0], Cond: needs.Condition,
		checkWire: needs.CheckWire, progress: s.Progress, started: time.Now(), Hosts: hostsOf(b), Proc: s.Proc,
		publish: s.Metrics}
	e.Cores = result.HostCores(e.Hosts)
	defer func() {
		if s.OutDir != "" { // before Down removes them with the backend's directories
			c, cancel := context.WithTimeout(context.WithoutCancel(hard), time.Minute)
			if kerr := keepLogs(c, b, tunnelLogs(logHosts(b, needs.Hosts)), s.OutDir); kerr != nil {
				s.Logger.Warn("the tunnel's logs are not kept with the results", "err", kerr)
			}
			cancel()
		}
		st.Teardown()
		if rerr := e.releaseAll(context.WithoutCancel(hard)); rerr != nil {
			err = errors.Join(err, rerr)
		}
		if derr := b.Down(context.WithoutCancel(hard)); derr != nil {
			err = errors.Join(err, derr)
		}
	}()
	e.Progressf("%s", b.Describe())
	if err := s.servers(hard, e, needs); err != nil {
		return run, err
	}
	run.Environment = environment(hard, b.Wire(), e.Cond, needs.Data, e.Hosts)
	run.Environment.Server = s.serverFacts(hard, e.Servers)
	if f := run.Environment.Server; f != nil && f.Engine == string(engine.MariaDB) {
		run.Environment.MariaDBVersion = f.Version // the schema-2 field, kept for older readers
	}
	run.Environment.CPUIdle = s.CPUIdle
	run.Environment.Machine = claim.Machine(hard)
	// The load of this machine matters where the sides run on it (the lab).
	if load := loadAverage(s.Proc); !e.Cores.Separate() && load > float64(runtime.NumCPU())/2 {
		e.Note("the machine's 1-minute load average was %.1f on %d CPUs when the study started: other work competes for the CPU, so CPU verdicts and throughput are pessimistic", load, runtime.NumCPU())
	}
	if err := st.Setup(hard, e); err != nil {
		return run, err
	}
	if err := s.points(soft, hard, e, st); err != nil {
		return run, err
	}
	st.Finish(run)
	run.Finished = time.Now().UTC()
	if err := result.Write(s.OutDir, run); err != nil {
		return run, err
	}
	if len(run.Points) == 0 {
		return run, nil // nothing measured (Ctrl-C before the first point): no report to draw
	}
	if err := report.Render(s.OutDir, run); err != nil {
		return run, fmt.Errorf("render report: %w", err)
	}
	return run, nil
}

// servers starts the study's database servers and prepares the data set on the first.
func (s *Session) servers(ctx context.Context, e *Env, needs Needs) error {
	if x := needs.Servers[0].Existing; x != nil {
		e.Servers = append(e.Servers, x)
		return s.existing(ctx, e, x, needs.Data)
	}
	for _, sv := range needs.Servers {
		srv, err := e.Backend.StartServer(ctx, sv)
		if err != nil {
			return err
		}
		e.Servers = append(e.Servers, srv)
	}
	d, first, host := needs.Data, e.Servers[0].Conn(), needs.Servers[0].Host
	if d.Driver == DriverNone {
		return nil
	}
	e.Progressf("preparing %s in %s (%s)", d, host, first.Engine.Title())
	if err := driverFor(d).Prepare(ctx, e, first, host); err != nil {
		return fmt.Errorf("prepare data set: %w", err)
	}
	return nil
}

// points measures the study's points until it has no other or Ctrl-C comes.
func (s *Session) points(soft, hard context.Context, e *Env, st Study) error {
	run := e.Run
	var spent, expected time.Duration
	for i := 1; ; i++ {
		if soft.Err() != nil {
			run.Interrupted = true
			return nil
		}
		c, ok := st.Next(run.Points)
		if !ok {
			return nil
		}
		if err := e.shapeFor(hard, c); err != nil {
			return err
		}
		before, err := e.wireBefore(hard, i)
		if err != nil {
			return err
		}
		e.Progressf("point %d%s: %s (%s) ETA %s", i, total(st), c.Label(), e.Cond, eta(st, spent, expected))
		t0 := time.Now()
		e.drove = nil
		p, err := st.Measure(hard, e, c)
		if err != nil {
			if hard.Err() != nil {
				run.Interrupted = true
				return nil
			}
			p.Failed, p.FailReason = true, err.Error()
			s.Logger.Warn("point failed", "point", c.Label(), "err", err)
		}
		if hard.Err() == nil {
			e.wireAfter(hard, before, &p)
		}
		spent, expected = spent+time.Since(t0), expected+c.Expected()
		run.Points = append(run.Points, p)
		run.Finished = time.Now().UTC()
		if err := result.Write(s.OutDir, run); err != nil {
			return err
		}
	}
}

// total is "/N" for a study that knows how many points it has.
func total(st Study) string {
	if r, ok := st.(interface{ Total() int }); ok {
		return fmt.Sprintf("/%d", r.Total())
	}
	return ""
}

// eta scales the remaining expected time by how long points took against their expected
// time so far; "?" before the first point or for a study whose points depend on results.
func eta(st Study, spent, expected time.Duration) string {
	r, ok := st.(Remainder)
	if !ok || expected == 0 {
		return "?"
	}
	return time.Duration(float64(r.Remaining()) * float64(spent) / float64(expected)).Round(time.Second).String()
}

// serverFacts reads what the report says of the first server; a server that cannot say
// its settings still gets its engine and version, and the log says why.
func (s *Session) serverFacts(ctx context.Context, servers []engine.Server) *result.ServerFacts {
	if len(servers) == 0 {
		return nil
	}
	f, err := servers[0].Facts(ctx)
	if err != nil {
		s.Logger.Warn("read the server's settings for the report", "err", err)
		f = result.ServerFacts{Engine: string(servers[0].Kind()), Version: servers[0].Version()}
	}
	return &f
}

// environment describes the machines, the lab and the load driver for results.json. The
// top-level machine fields are the server's host (the shared machine in the lab).
func environment(ctx context.Context, w WireState, c link.Condition, d DataSet, hosts []result.Host) result.Environment {
	env := result.Environment{Shaper: w.Shaper, TCPCongestion: w.Congestion, LinkAsApplied: c.String(), LinkAsReadBack: w.ReadBack, Hosts: hosts}
	m, ok := result.HostWithRole(hosts, "server")
	if !ok && len(hosts) > 0 {
		m = hosts[0]
	}
	env.CPUs, env.Kernel, env.CPUModel, env.MemoryBytes = m.Cores, m.Kernel, m.CPUModel, m.MemoryBytes
	switch d.Driver {
	case DriverNone: // no load driver of the study engine's ran
	case DriverPgbench:
		// Only the driver that ran is named: sysbench took no part.
		env.PgbenchVersion, _ = pgbench.Version(ctx, "")
	default:
		if v, err := sysbench.Version(ctx); err == nil {
			env.SysbenchVersion = v
		}
	}
	return env
}

// shapeFor shapes the wire for cell c: to the cell's own wire when it has one, else to the
// run's condition when nothing is applied yet.
func (e *Env) shapeFor(ctx context.Context, c Cell) error {
	w := c.Wire()
	if w == nil && e.applied != nil {
		return nil
	}
	want := e.Cond
	if w != nil {
		want = *w
	}
	return e.Shape(ctx, want)
}
