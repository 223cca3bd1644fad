package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
)

func cmdLink(p *Process, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(p.Stdout, "Usage: wirelab link set|check [flags]\n\n  set    change the wire of a running lab (rate, delay, jitter, loss)\n  check  measure the wire with iperf3 and echo probes, against what was asked\n\nExample:\n  wirelab link set --rate 2mbit --rtt 250ms\n  wirelab link check\n\nRun 'wirelab link set --help' or 'wirelab link check --help'.")
		return nil
	}
	switch args[0] {
	case "set":
		return cmdLinkSet(p, args[1:])
	case "check":
		return cmdLinkCheck(p, args[1:])
	}
	return usagef("link: unknown subcommand %q: want set or check", args[0])
}

func cmdLinkSet(p *Process, args []string) error {
	fs := newFlagSet(p, "link set", "change the wire of a running lab; replaces the previous condition",
		"wirelab link set --rate 20mbit --rtt 40ms --jitter 1ms --loss 0.1%\nwirelab link set --rate unlimited   # back to a bare wire")
	id := addLabFlag(fs)
	force := fs.Bool("force", false, "re-shape a lab that a running run or study owns (its points then measure the new wire)")
	lf := link.AddFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("link set: unexpected argument %q", fs.Arg(0))
	}
	c, shaper, err := lf.Condition()
	if err != nil {
		return &UsageError{err}
	}
	if err := requireRoot(p); err != nil {
		return err
	}
	st, err := lab.Load(p.StateDir, *id)
	if err != nil {
		return fmt.Errorf("link set: %w", err)
	}
	if !*force {
		if err := st.CheckOwner(p.proc(), "re-shape it anyway (its points then measure the new wire)"); err != nil {
			return fmt.Errorf("link set: %w", err)
		}
	}
	// Through the lab, so the wire (and the delayer's files) is the one `up` and `down` use.
	l := lab.Attach(st, lab.Options{StateDir: p.StateDir, Self: p.Self, Runner: p.Runner, Logger: p.Logger, Proc: p.proc()})
	if err := l.Shape(context.Background(), c, shaper, p.Self); err != nil {
		return fmt.Errorf("link set: %w", err)
	}
	fmt.Fprintf(p.Stdout, "link %s: %s (shaper %s)\n", st.RunID, st.Condition, st.Shaper)
	return nil
}

func cmdLinkCheck(p *Process, args []string) error {
	fs := newFlagSet(p, "link check", "measure the wire of a running lab with real traffic (iperf3 each way, TCP echo RTT, UDP loss) against what was asked",
		"wirelab link check --duration 5s\nwirelab link check --json > wire.json")
	id := addLabFlag(fs)
	dur := fs.Duration("duration", 5*time.Second, "iperf3 time per direction (also the RTT probe's budget)")
	asJSON := fs.Bool("json", false, "print the result as JSON (result.WireCheck)")
	force := fs.Bool("force", false, "check a lab that a running run or study owns (the check's traffic shares the wire with its points)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("link check: unexpected argument %q", fs.Arg(0))
	}
	if *dur < time.Second || *dur > 10*time.Minute {
		return usagef("link check: --duration %s: want 1s to 10m", *dur)
	}
	if err := requireRoot(p); err != nil {
		return err
	}
	st, err := lab.Load(p.StateDir, *id)
	if err != nil {
		return fmt.Errorf("link check: %w", err)
	}
	if !*force {
		if err := st.CheckOwner(p.proc(), "check it anyway (iperf3 fills the wire its points measure)"); err != nil {
			return fmt.Errorf("link check: %w", err)
		}
	}
	h := link.CheckHostsOf(st)
	h.ServerAddr = lab.HostAddr[lab.Server]
	soft, _, stop := interruptContexts(p)
	defer stop()
	wc, err := link.Check(soft, p.Runner, h, st.Condition, link.CheckOptions{Duration: *dur, Proc: p.proc()})
	if err != nil {
		return fmt.Errorf("link check: %w", err)
	}
	if *asJSON {
		b, _ := json.MarshalIndent(wc, "", "  ")
		fmt.Fprintln(p.Stdout, string(b))
	} else {
		fmt.Fprintf(p.Stdout, "lab %s, wire %s (shaper %s)\n\n", st.RunID, st.Condition, st.Shaper)
		link.WriteCheck(p.Stdout, wc)
	}
	if !wc.OK {
		return fmt.Errorf("link check: the wire is not what was asked: %s", wc.Verdict)
	}
	return nil
}
