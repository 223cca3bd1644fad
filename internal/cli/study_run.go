package cli

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	"github.com/wirelab/wirelab/internal/livemetrics"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
)

// measureOptions are what every measuring command decides besides its study.
type measureOptions struct {
	Out    string
	Awake  bool // hold the CPUs out of deep idle while measuring
	NoWait bool // fail instead of waiting for another measurement
	// MetricsListen is where live metrics are served while measuring; "" = nowhere.
	MetricsListen string
	// Open builds the machines; nil is the namespace lab.
	Open study.Opener
}

// measureFlags are the flags behind measureOptions, which every measuring command (run,
// each study) registers: the CPUs held awake, waiting for the machine, live metrics.
// Where the results go is the command's own --out (its default names the study).
type measureFlags struct {
	awake, noWait *bool
	metrics       *livemetrics.Flags
}

func addMeasureFlags(fs *flag.FlagSet) *measureFlags {
	return &measureFlags{awake: addAwakeFlag(fs), noWait: addNoWaitFlag(fs), metrics: livemetrics.AddFlags(fs)}
}

// options are the flags checked (an error names the flag), the results going to out.
func (m *measureFlags) options(out string) (measureOptions, error) {
	addr, err := m.metrics.Addr()
	if err != nil {
		return measureOptions{}, err
	}
	return measureOptions{Out: out, Awake: *m.awake, NoWait: *m.noWait, MetricsListen: addr}, nil
}

// serveMetrics serves live metrics at addr until stop is called; nil Publisher and a stop
// that does nothing without an address. A port that cannot be listened on fails here,
// before the lab is built.
func serveMetrics(p *Process, addr string) (study.Publisher, func(), error) {
	if addr == "" {
		return nil, func() {}, nil
	}
	ep, err := livemetrics.Listen(addr, runtime.NumCPU())
	if err != nil {
		return nil, nil, fmt.Errorf("--metrics-listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ep.Serve(ctx, p.Logger)
	}()
	fmt.Fprintf(p.Stderr, "live metrics at http://%s/metrics while measuring (docs/live-metrics.md)\n", ep.Addr())
	return ep, func() { cancel(); <-done }, nil
}

// runStudy runs a study in a session with Ctrl-C handling, the machine lock and the CPUs
// kept awake when asked, and prints where the report is.
func runStudy(p *Process, st study.Study, o measureOptions) error {
	out := o.Out
	pub, stopMetrics, err := serveMetrics(p, o.MetricsListen)
	if err != nil {
		return err
	}
	defer stopMetrics()
	soft, hard, stop := interruptContexts(p)
	defer stop()
	idle, release := keepAwake(p, o.Awake)
	defer release()
	s := &study.Session{Runner: p.Runner, Logger: p.Logger, StateDir: p.StateDir, LockDir: p.lockDir(), Self: p.Self,
		Progress: p.Stderr, CPUIdle: idle, OutDir: out, Command: measureCommand(st.Name()), NoWait: o.NoWait, Open: o.Open,
		Proc: p.proc(), Metrics: pub}
	start := time.Now()
	run, err := s.Run(soft, hard, st)
	if run != nil && len(run.Points) > 0 {
		if h, ok := st.(interface{ Headlines([]result.Point) []string }); ok {
			for _, line := range h.Headlines(run.Points) {
				fmt.Fprintln(p.Stdout, line)
			}
		}
		abs, _ := filepath.Abs(out)
		fmt.Fprintf(p.Stdout, "%d points in %s; report: %s\n", len(run.Points), time.Since(start).Round(time.Second), filepath.Join(abs, "report.md"))
		if run.Interrupted {
			fmt.Fprintln(p.Stdout, "interrupted: the report holds the points finished before Ctrl-C")
		}
	}
	if run != nil && len(run.Points) == 0 && run.Interrupted {
		fmt.Fprintln(p.Stdout, "interrupted before the first point finished: nothing measured, lab removed")
	}
	if err != nil {
		return fmt.Errorf("%s: %w", st.Name(), err)
	}
	return nil
}
