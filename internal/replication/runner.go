package replication

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/report"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// Scenario names, as Point.Series.
const (
	LagVsRTT  = "lag-vs-rtt"
	MaxLoad   = "max-load"
	Bandwidth = "bandwidth"
	FaultRun  = "fault"
)

// ScenarioNames maps --scenarios numbers to series names (4, the fault run, is opt-in).
var ScenarioNames = map[int]string{1: LagVsRTT, 2: MaxLoad, 3: Bandwidth, 4: FaultRun}

// Options is the whole study, validated by the CLI.
type Options struct {
	Channels       []Channel
	Scenarios      []int
	RateCapBps     int64           // the wire's rate in scenarios 1, 2 and 4
	Delay          time.Duration   // one-way delay of scenarios 2, 3 and 4
	RTTs           []time.Duration // scenario 1
	LagQPS         int             // scenario 1 (and 4) load
	Loads          []int           // scenario 3 loads (QPS)
	Duration       time.Duration   // load window of scenarios 1, 3 and 4
	SearchDuration time.Duration   // load window of each scenario 2 probe
	SearchFactor   float64
	SearchBisect   int
	SearchMaxQPS   int
	AbortLag       time.Duration
	CatchUpTimeout time.Duration
	Tables         int
	TableSize      int
	Threads        int
	RandType       string
	Shaper         string
	BufferPool     string
	TunnelCompress string
	TunnelLevel    int
	TunnelGroup    time.Duration
	CheckWire      bool
	Rule           Rule
	Fault          Fault
	OutDir         string
}

// Env is what the study needs from the process around it.
type Env struct {
	Runner      execx.Runner
	Logger      *slog.Logger
	StateDir    string
	Self        string
	Progress    io.Writer
	Environment func(context.Context, *lab.Lab) result.Environment
	Command     string // the wirelab subcommand ("study replication"): names the lock holder and lab owner
	NoWait      bool   // fail instead of waiting when another measurement holds the machine
}

// Runner runs the study on one lab.
type Runner struct {
	Opts          Options
	Env           Env
	Lab           *lab.Lab
	Pair          *Pair
	Cond          link.Condition // the wire as it is now
	RTTMeasuredMs float64        // TCP echo RTT between replica and source under Cond
	WireCheck     *result.WireCheck
	Log           *slog.Logger
	run           *result.Run
	started       time.Time
	conds         []string // every wire the run applied, for the environment
}

// Run builds the lab (server + replica), the data set and replication, runs the chosen
// scenarios, writes results.json after every point, renders the report and tears the lab
// down. soft cancelled = stop after the current point; hard = abort it.
func Run(soft, hard context.Context, o Options, env Env) (run *result.Run, err error) {
	if env.Logger == nil {
		env.Logger = slog.New(slog.DiscardHandler)
	}
	if env.Progress == nil {
		env.Progress = io.Discard
	}
	r := &Runner{Opts: o, Env: env, Log: env.Logger.With("component", "replication"), started: time.Now()}
	r.run = &result.Run{Schema: result.Schema, Tool: "wirelab", Study: "replication", Started: time.Now().UTC(),
		Spec: o.spec(), Notes: o.notes()}
	// One measurement at a time: the machine lock is held from before the lab is built
	// until after it is torn down (deferred first, released last); the lab records this
	// process as its owner.
	claim, err := lab.ClaimMachine(soft, lab.ClaimOptions{StateDir: env.StateDir, Command: env.Command,
		NoWait: env.NoWait, Progress: env.Progress, Runner: env.Runner})
	if err != nil {
		return nil, err
	}
	defer claim.Release()
	l, err := lab.Up(hard, lab.Options{Hosts: []string{lab.Server, lab.Replica}, Shaper: o.Shaper,
		StateDir: env.StateDir, Self: env.Self, Runner: env.Runner, Logger: env.Logger, Owner: claim.Owner})
	if err != nil {
		return nil, err
	}
	r.Lab = l
	r.run.RunID = l.State.RunID
	if err := claim.SetLab(l.State.RunID); err != nil {
		r.Log.Warn("name the lab in the measurement lock", "err", err)
	}
	defer func() {
		if r.Pair != nil {
			r.Pair.Close()
		}
		if derr := l.Down(context.WithoutCancel(hard)); derr != nil {
			err = errors.Join(err, fmt.Errorf("tear down lab %s: %w", l.State.RunID, derr))
		}
	}()
	r.progress("lab %s up: server + replica", l.State.RunID)
	stopHB, err := r.setup(hard)
	if stopHB != nil {
		defer stopHB()
	}
	if err != nil {
		return r.run, err
	}
	if env.Environment != nil {
		r.run.Environment = env.Environment(hard, l)
	}
	r.run.Environment.Machine = claim.Machine(hard)
	err = r.scenarios(soft, hard)
	r.run.Finished = time.Now().UTC()
	r.run.Notes = append(r.run.Notes, Headlines(r.run.Points)...)
	if werr := result.Write(o.OutDir, r.run); werr != nil {
		return r.run, errors.Join(err, werr)
	}
	if len(r.run.Points) > 0 {
		if rerr := report.Render(o.OutDir, r.run); rerr != nil {
			return r.run, errors.Join(err, fmt.Errorf("render report: %w", rerr))
		}
	}
	return r.run, err
}

// setup starts both servers, prepares the data set once on the source, lets replication
// copy it and checks the copy. It returns the heartbeat's stop.
func (r *Runner) setup(ctx context.Context) (func(), error) {
	o, l := r.Opts, r.Lab
	src, err := l.StartMariaDB(ctx, lab.Server, lab.DBOptions{BufferPool: o.BufferPool, ServerID: 1, LogBin: true})
	if err != nil {
		return nil, err
	}
	// slave_net_timeout: the IO thread notices a dead connection in 10 s instead of 60,
	// so a dropped wire heals quickly (MASTER_CONNECT_RETRY is 1 s).
	rep, err := l.StartMariaDB(ctx, lab.Replica, lab.DBOptions{BufferPool: o.BufferPool, ServerID: 2, LogBin: true,
		Extra: map[string]string{"slave_net_timeout": "10"}})
	if err != nil {
		return nil, err
	}
	p := &Pair{Lab: l, Source: src, Replica: rep, Tables: Tables(o.Tables), Self: r.Env.Self,
		TunnelCompress: o.TunnelCompress, TunnelLevel: o.TunnelLevel, TunnelGroup: o.TunnelGroup, Log: r.Log}
	r.Pair = p
	if p.SrcDB, err = Open(src); err != nil {
		return nil, err
	}
	if p.RepDB, err = Open(rep); err != nil {
		return nil, err
	}
	r.progress("preparing %d tables x %d rows on the source (the replica gets them by replication)", o.Tables, o.TableSize)
	prep := sysbench.Options{Workload: Workload, Tables: o.Tables, TableSize: o.TableSize, Socket: src.Socket,
		User: src.User, Password: src.Password, DB: src.DB, NS: l.State.NS(lab.Server), Cgroup: l.State.Cgroup}
	if err := sysbench.Prepare(ctx, prep, r.Log); err != nil {
		return nil, fmt.Errorf("prepare data set: %w", err)
	}
	if err := CreateHeartbeat(ctx, p.SrcDB); err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := p.Start(ctx, o.CatchUpTimeout); err != nil {
		return nil, err
	}
	r.note("The replica was built by replication itself: the source's binlog from its first event (GTID, empty slave position), "+
		"sysbench prepare included; CHECKSUM TABLE of all %d tables matched before the first point (copy took %s over the unshaped wire).",
		o.Tables, time.Since(t0).Round(100*time.Millisecond))
	r.progress("replica caught up, %d tables match", o.Tables)
	hb := StartHeartbeat(ctx, p.SrcDB, HeartbeatEvery, r.Log)
	return func() { hb.Stop() }, nil
}

// shape puts c on the wire (when it differs), measures the RTT replica→source (TCP echo)
// and, when asked, checks the wire.
func (r *Runner) shape(ctx context.Context, c link.Condition) error {
	if c == r.Cond && r.RTTMeasuredMs > 0 {
		return nil
	}
	if err := r.Lab.Shape(ctx, c, r.Opts.Shaper, r.Env.Self); err != nil {
		return err
	}
	r.Cond = c
	st := r.Lab.State
	env := &r.run.Environment
	// The study changes the wire between scenarios: the environment lists every wire it
	// applied (each point also records its own) and the read-back of the latest.
	r.conds = append(r.conds, c.String())
	env.Shaper, env.LinkAsApplied, env.LinkAsReadBack = st.Shaper, strings.Join(r.conds, " | "), st.ReadBack
	h := link.CheckHosts{ClientNS: st.NS(lab.Replica), ServerNS: st.NS(lab.Server), ServerAddr: lab.HostAddr[lab.Server], WireNS: st.NS(lab.Wire)}
	r.RTTMeasuredMs = 0
	if rtts, err := (link.NetnsProber{}).RTT(ctx, h, 7, 5*time.Second); err == nil && len(rtts) > 0 {
		r.RTTMeasuredMs = medianMs(rtts)
	} else {
		r.Log.Warn("RTT probe across the wire failed", "err", err)
	}
	r.WireCheck = nil
	if r.Opts.CheckWire {
		wc, err := link.Check(ctx, r.Lab.Runner(), h, c, link.CheckOptions{Duration: 2 * time.Second, RTTSamples: 20, LossPackets: 100})
		if err != nil {
			r.Log.Warn("link check failed", "err", err)
			wc = &result.WireCheck{Verdict: "check failed: " + err.Error()}
		}
		r.WireCheck = wc
	}
	r.progress("wire: %s (TCP echo RTT %.2f ms, replica→source)", c, r.RTTMeasuredMs)
	return nil
}

// medianMs is the median round trip in milliseconds.
func medianMs(ds []time.Duration) float64 {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d) / float64(time.Millisecond)
	}
	return Percentile(xs, 50)
}

// add records a finished point and rewrites results.json, so finished points survive.
func (r *Runner) add(p result.Point) error {
	r.run.Points = append(r.run.Points, p)
	r.run.Finished = time.Now().UTC()
	ck := "checksum ok"
	if p.Extra["checksum_ok"] != 1 {
		ck = "CHECKSUM MISMATCH"
	}
	if p.Failed {
		ck = "FAILED: " + p.FailReason
	}
	bounded := "bounded"
	if p.Extra["bounded"] != 1 {
		bounded = "UNBOUNDED"
	}
	r.progress("  %-10s %-17s rtt %4.0f ms  %5.0f qps (got %5.0f)  lag max %6.2f s p99 %6.2f s  %s  binlog %.2f Mbit/s  wire %.2f Mbit/s  catch-up %.1f s  %s",
		p.Series, p.Channel, p.Extra["rtt_ms"], p.Extra["target_qps"], p.QPS, p.Extra["lag_max_s"], p.Extra["lag_p99_s"], bounded,
		p.Extra["binlog_mbit_s"], p.Extra["wire_mbit_s"], p.Extra["catchup_s"], ck)
	return result.Write(r.Opts.OutDir, r.run)
}

func (r *Runner) note(format string, a ...any) {
	r.run.Notes = append(r.run.Notes, fmt.Sprintf(format, a...))
}

func (r *Runner) progress(format string, a ...any) {
	fmt.Fprintf(r.Env.Progress, "[%s] %s\n", time.Since(r.started).Round(time.Second), fmt.Sprintf(format, a...))
}
