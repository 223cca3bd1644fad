package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
)

func cmdRun(p *Process, args []string) error {
	fs := newFlagSet(p, "run", "build a lab, run one sysbench series over thread counts across the wire, report, tear down",
		"wirelab run --rate 20mbit --threads 1,8,32 --duration 10s --compression\nwirelab run --rtt 50ms --threads 1,4 --workload oltp_point_select --out /tmp/r1")
	wf := link.AddFlags(fs)
	bf := addBenchFlags(fs, "1,8,32", 10*time.Second, 2*time.Second, 4, 100000)
	compression := fs.Bool("compression", false, "MySQL protocol compression (sysbench --mysql-compression=on, zlib)")
	tls := fs.Bool("tls", false, "TLS between sysbench and MariaDB (--mysql-ssl=on)")
	channel := fs.String("channel", study.ChannelDirect, "direct, or tunnel: sysbench reaches MariaDB through `wirelab tunnel` (entry in the client host, exit in the server host)")
	tf := addTunnelFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("run: unexpected argument %q", fs.Arg(0))
	}
	cond, shaper, err := wf.Condition()
	if err != nil {
		return &UsageError{err}
	}
	spec, err := bf.validate("run")
	if err != nil {
		return &UsageError{err}
	}
	if err := requireRoot(p); err != nil {
		return err
	}
	if err := preflight(p, shaper, cond); err != nil {
		return err
	}
	if *channel != study.ChannelDirect && *channel != study.ChannelTunnel {
		return usagef("--channel %q: want direct or tunnel", *channel)
	}
	topts, err := tf.options()
	if err != nil {
		return &UsageError{err}
	}
	series := link.FormatRate(cond.RateBps)
	if *compression {
		series += "+compression"
	}
	if *tls {
		series += "+tls"
	}
	if *channel == study.ChannelTunnel {
		series += "+tunnel-" + topts.Compress
	}
	plan := study.Plan{
		Study: "run", Condition: cond, Shaper: shaper, OutDir: spec.OutDir,
		RandType: *bf.randType, BufferPool: *bf.pool, CheckWire: !cond.Unlimited() || cond.Delay > 0,
		Spec: result.Spec{Workload: *bf.workload, Threads: spec.Threads, DurationS: spec.Duration.Seconds(),
			WarmupS: spec.Warmup.Seconds(), Repeat: *bf.repeat, Tables: *bf.tables, TableSize: *bf.tableSize,
			Series: []string{series}, LinkRateBps: cond.RateBps,
			LinkDelayMs: float64(cond.Delay) / float64(time.Millisecond)},
	}
	for r := 1; r <= *bf.repeat; r++ {
		for _, t := range spec.Threads {
			plan.Cells = append(plan.Cells, study.PlannedCell{Cell: study.Cell{
				Study: "run", Series: series, Workload: *bf.workload, Threads: t,
				Duration: spec.Duration, Warmup: spec.Warmup, Compression: *compression, TLS: *tls,
				Transport: "tcp", Channel: *channel, ClientHost: lab.Client,
				Host: lab.HostAddr[lab.Server], Port: 3306, Repeat: r,
			}})
		}
	}
	if *channel == study.ChannelTunnel {
		plan.Prelude = study.TunnelPrelude(topts)
		plan.Spec.Extra = map[string]string{"tunnel": strings.Join(lab.TunnelArgv("wirelab", "entry", "CERTS", topts)[3:], " ")}
	}
	return runPlan(p, plan, spec)
}

// runPlan runs a plan in a session with Ctrl-C handling and prints where the report is.
func runPlan(p *Process, plan study.Plan, spec benchSpec) error {
	soft, hard, stop := interruptContexts(p)
	defer stop()
	idle, release := keepAwake(p, spec.Awake)
	defer release()
	s := &study.Session{Runner: p.Runner, Logger: p.Logger, StateDir: p.StateDir, Self: p.Self, Progress: p.Stderr, CPUIdle: idle,
		Command: measureCommand(plan.Study), NoWait: spec.NoWait}
	run, err := s.Run(soft, hard, plan)
	if run != nil && len(run.Points) > 0 {
		abs, _ := filepath.Abs(plan.OutDir)
		fmt.Fprintf(p.Stdout, "%d points; report: %s\n", len(run.Points), filepath.Join(abs, "report.md"))
		if run.Interrupted {
			fmt.Fprintln(p.Stdout, "interrupted: the report holds the points finished before Ctrl-C")
		}
	}
	if run != nil && len(run.Points) == 0 && run.Interrupted {
		fmt.Fprintln(p.Stdout, "interrupted before the first point finished: nothing measured, lab removed")
	}
	if err != nil {
		return fmt.Errorf("%s: %w", plan.Study, err)
	}
	return nil
}
