package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

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
	// Open builds the machines; nil is the namespace lab.
	Open study.Opener
	// Command is the command line as typed, for the files that quote it (goals.json).
	Command string
}

// runStudy runs a study in a session with Ctrl-C handling, the machine lock and the CPUs
// kept awake when asked, and prints where the report is.
func runStudy(p *Process, st study.Study, o measureOptions) error {
	out := o.Out
	soft, hard, stop := interruptContexts(p)
	defer stop()
	idle, release := keepAwake(p, o.Awake)
	defer release()
	s := &study.Session{Runner: p.Runner, Logger: p.Logger, StateDir: p.StateDir, LockDir: p.lockDir(), Self: p.Self,
		Progress: p.Stderr, CPUIdle: idle, OutDir: out, Command: measureCommand(st.Name()), NoWait: o.NoWait, Open: o.Open,
		Margin: o.Margin, Proc: p.proc()}
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
