package study

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/report"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// Plan is a whole study: the lab it needs and the cells to measure, in order.
type Plan struct {
	Study      string
	Spec       result.Spec
	Condition  link.Condition // the wire for every cell without its own
	Shaper     string
	Cells      []PlannedCell
	OutDir     string
	RandType   string
	BufferPool string
	CheckWire  bool // run `link check` after each change of the wire and record it
	Notes      []string
	// Prelude runs after the data set is prepared and before the first cell; it may
	// measure (calibration) and rewrite the plan's cells, spec and notes.
	Prelude func(ctx context.Context, eng *Engine, plan *Plan) error
}

// PlannedCell is a cell with the wire it needs (nil: the plan's condition).
type PlannedCell struct {
	Cell
	Link *link.Condition
}

// Session runs a plan on a fresh lab and tears it down.
type Session struct {
	Runner   execx.Runner
	Logger   *slog.Logger
	StateDir string
	Self     string
	Progress io.Writer // point k/N lines with an ETA
	CPUIdle  string    // what was done about CPU idle states, for the environment
	Command  string    // the wirelab subcommand, e.g. "study bandwidth": names the lock holder and lab owner
	NoWait   bool      // fail instead of waiting when another measurement holds the machine
}

// Run builds the lab, prepares the data set once, measures every cell (results.json is
// rewritten after each point so finished points survive anything), renders the report and
// removes the lab. soft cancelled = stop after the current point; hard = abort it.
func (s *Session) Run(soft, hard context.Context, plan Plan) (run *result.Run, err error) {
	run = &result.Run{Schema: result.Schema, Tool: "wirelab", Study: plan.Study,
		Started: time.Now().UTC(), Spec: plan.Spec, Notes: plan.Notes}
	// One measurement at a time: the machine lock is held from before the lab is built
	// until after it is torn down (deferred first, released last); the lab records this
	// process as its owner.
	claim, err := lab.ClaimMachine(soft, lab.ClaimOptions{StateDir: s.StateDir, Command: s.Command,
		NoWait: s.NoWait, Progress: s.Progress, Runner: s.Runner})
	if err != nil {
		return nil, err
	}
	defer claim.Release()
	l, err := lab.Up(hard, lab.Options{Hosts: []string{lab.Client, lab.Server},
		Condition: plan.Condition, Shaper: plan.Shaper, StateDir: s.StateDir, Self: s.Self,
		Runner: s.Runner, Logger: s.Logger, Owner: claim.Owner})
	if err != nil {
		return nil, err
	}
	run.RunID = l.State.RunID
	if err := claim.SetLab(l.State.RunID); err != nil {
		s.Logger.Warn("name the lab in the measurement lock", "err", err)
	}
	defer func() {
		if derr := l.Down(context.WithoutCancel(hard)); derr != nil {
			err = errors.Join(err, fmt.Errorf("tear down lab %s: %w", l.State.RunID, derr))
		}
	}()
	fmt.Fprintf(s.Progress, "lab %s up: %s\n", l.State.RunID, l.State.Condition)
	if _, err := l.StartMariaDB(hard, lab.Server, lab.DBOptions{BufferPool: plan.BufferPool}); err != nil {
		return nil, err
	}
	db := l.State.DB
	prep := sysbench.Options{Workload: plan.Spec.Workload, Tables: plan.Spec.Tables,
		TableSize: plan.Spec.TableSize, Socket: db.Socket, User: db.User, Password: db.Password,
		DB: db.Name, NS: l.State.NS(lab.Server), Cgroup: l.State.Cgroup}
	fmt.Fprintf(s.Progress, "preparing %d tables x %d rows\n", plan.Spec.Tables, plan.Spec.TableSize)
	if err := sysbench.Prepare(hard, prep, s.Logger); err != nil {
		return nil, fmt.Errorf("prepare data set: %w", err)
	}
	run.Environment = environment(hard, l)
	run.Environment.CPUIdle = s.CPUIdle
	run.Environment.Machine = claim.Machine(hard)
	if load := loadAverage(); load > float64(runtime.NumCPU())/2 {
		plan.Notes = append(plan.Notes, fmt.Sprintf("the machine's 1-minute load average was %.1f on %d CPUs when the study started: other work competes for the CPU, so CPU verdicts and throughput are pessimistic", load, runtime.NumCPU()))
		run.Notes = plan.Notes
	}
	eng := &Engine{Lab: l, Tables: plan.Spec.Tables, TableSize: plan.Spec.TableSize,
		RandType: plan.RandType, Logger: s.Logger, Self: s.Self}
	if plan.Prelude != nil {
		if err := plan.Prelude(hard, eng, &plan); err != nil {
			return run, err
		}
		run.Spec, run.Notes = plan.Spec, plan.Notes
	}
	current := l.State.Condition
	checked := false
	started := time.Now()
	var done time.Duration
	for i, pc := range plan.Cells {
		if soft.Err() != nil {
			run.Interrupted = true
			break
		}
		want := plan.Condition
		if pc.Link != nil {
			want = *pc.Link
		}
		if want != current || !checked {
			if want != current {
				if err := l.Shape(hard, want, plan.Shaper, s.Self); err != nil {
					return run, err
				}
				current = want
			}
			if plan.CheckWire {
				eng.WireCheck = s.check(hard, l)
			}
			checked = true
		}
		eta := "?"
		if done > 0 {
			rate := float64(time.Since(started)) / float64(done)
			var left time.Duration
			for _, c := range plan.Cells[i:] {
				left += c.Warmup + c.Duration + 2*time.Second
			}
			eta = (time.Duration(rate * float64(left))).Round(time.Second).String()
		}
		fmt.Fprintf(s.Progress, "[%d/%d] %s threads=%d (%s) ETA %s\n", i+1, len(plan.Cells),
			pc.Series, pc.Threads, current, eta)
		p, err := eng.Measure(hard, pc.Cell)
		if err != nil {
			if hard.Err() != nil {
				run.Interrupted = true
				break
			}
			p.Failed, p.FailReason = true, err.Error()
			s.Logger.Warn("point failed", "series", pc.Series, "threads", pc.Threads, "err", err)
		}
		run.Points = append(run.Points, p)
		done += pc.Warmup + pc.Duration + 2*time.Second
		run.Finished = time.Now().UTC()
		if err := result.Write(plan.OutDir, run); err != nil {
			return run, err
		}
	}
	run.Finished = time.Now().UTC()
	if err := result.Write(plan.OutDir, run); err != nil {
		return run, err
	}
	if len(run.Points) == 0 && run.Interrupted {
		return run, nil // nothing measured: results.json says so, there is no report to draw
	}
	if err := report.Render(plan.OutDir, run); err != nil {
		return run, fmt.Errorf("render report: %w", err)
	}
	return run, nil
}

func (s *Session) check(ctx context.Context, l *lab.Lab) *result.WireCheck {
	wc, err := link.Check(ctx, l.Runner(), link.CheckHostsOf(l.State), l.State.Condition, link.CheckOptions{Duration: 3 * time.Second})
	if err != nil {
		s.Logger.Warn("link check failed", "err", err)
		return &result.WireCheck{Verdict: "check failed: " + err.Error()}
	}
	return wc
}

func environment(ctx context.Context, l *lab.Lab) result.Environment {
	env := result.Environment{CPUs: runtime.NumCPU(), Shaper: l.State.Shaper,
		LinkAsApplied: l.State.Condition.String(), LinkAsReadBack: l.State.ReadBack}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		env.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				env.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			env.MemoryBytes = kb * 1024
		}
	}
	if l.State.DB != nil {
		env.MariaDBVersion = l.State.DB.Version
	}
	if v, err := sysbench.Version(ctx); err == nil {
		env.SysbenchVersion = v
	}
	return env
}

// loadAverage is the 1-minute load average (0 when unreadable).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	_, _ = fmt.Sscanf(string(b), "%f", &l)
	return l
}
