package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
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
	// Margin is what the run's verdicts are judged with (marginFlag.forMachine).
	Margin result.Margin
	// MetricsListen is where live metrics are served while measuring; "" = nowhere.
	MetricsListen string
	// Open builds the machines; nil is the namespace lab.
	Open study.Opener
	// Command is the command line as typed, for the files that quote it (goals.json).
	Command string
}

// measureFlags are the flags behind measureOptions, which every measuring command (run,
// calibrate, each study) registers: the CPUs held awake, waiting for the machine, live
// metrics. Where the results go is the command's own --out (its default names the
// study); the margin is the command's --margin (marginFlag), resolved once validated.
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
		Margin: o.Margin, Proc: p.proc(), Metrics: pub}
	start := time.Now()
	run, err := s.Run(soft, hard, st)
	if run != nil && len(run.Points) > 0 {
		if h, ok := st.(interface{ Headlines([]result.Point) []string }); ok {
			for _, line := range h.Headlines(run.Points) {
				fmt.Fprintln(p.Stdout, line)
			}
		}
		if g, ok := st.(interface {
			WriteGoals(dir, command string, run *result.Run) error
		}); ok && out != "" {
			if gerr := g.WriteGoals(out, o.Command, run); gerr != nil {
				err = errors.Join(err, gerr)
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

// commandLine is the command as typed, for the files that quote it, without --out and its
// directory (the file sits in it): "wirelab study replication --quick --channels native,tunnel".
func commandLine(cmd string, args []string) string {
	words := []string{cmd}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--out" || a == "-out":
			i++
			continue
		case strings.HasPrefix(a, "--out=") || strings.HasPrefix(a, "-out="):
			continue
		case strings.ContainsAny(a, " \t\"'$`|;&<>()*?"):
			a = strconv.Quote(a)
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}
