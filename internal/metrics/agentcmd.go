package metrics

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/flagx"
)

// SampleCommand is the command line of `wirelab agent sample`: how often the agent prints
// a line, for how long at most, and what it reads. The backend that starts an agent on a
// host renders it (Argv) and the agent parses it (AddSampleFlags), both here, so the two
// sides cannot disagree on a flag's name or form.
type SampleCommand struct {
	Every, For         time.Duration
	UpClass, DownClass TCClass // the shaped class of each direction; zero: not a class
	UpIface, DownIface string  // or: what UpIface transmits, what DownIface receives
	Comms              []string
	PIDs               []int
	Trees              []int // processes watched with their children of the moment
}

// Defaults of `wirelab agent sample` when a flag is not given.
const (
	DefaultSampleEvery = time.Second
	DefaultSampleFor   = 2 * time.Hour
)

// maxAgentReadFailures bounds how many reads in a row may fail before the agent gives up:
// an agent that can no longer read its counters must end, not print nothing for hours.
const maxAgentReadFailures = 10

// Argv is the command line that runs c with the wirelab binary agent.
func (c SampleCommand) Argv(agent string) []string {
	a := []string{agent, "agent", "sample", "--every", flagx.Duration(c.Every), "--for", flagx.Duration(c.For)}
	add := func(name, v string) {
		if v != "" {
			a = append(a, "--"+name, v)
		}
	}
	if c.UpClass.Dev != "" {
		add("up-class", c.UpClass.String())
	}
	if c.DownClass.Dev != "" {
		add("down-class", c.DownClass.String())
	}
	add("up-iface", c.UpIface)
	add("down-iface", c.DownIface)
	for _, n := range c.Comms {
		add("comm", n)
	}
	for _, n := range c.PIDs {
		add("pid", strconv.Itoa(n))
	}
	for _, n := range c.Trees {
		add("tree", strconv.Itoa(n))
	}
	return a
}

// SampleFlags are the agent's flags on a flag set, turned into a SampleCommand by Command.
type SampleFlags struct {
	every, limit                           *time.Duration
	upClass, downClass, upIface, downIface *string
	comms, pids, trees                     flagx.List
}

// AddSampleFlags registers the flags of `wirelab agent sample` on fs.
func AddSampleFlags(fs *flag.FlagSet) *SampleFlags {
	f := &SampleFlags{
		every:     fs.Duration("every", DefaultSampleEvery, "interval between lines, at least 10ms"),
		limit:     fs.Duration("for", DefaultSampleFor, "stop after this long, whatever happens (required upper bound)"),
		upClass:   fs.String("up-class", "", "HTB class whose sent bytes are client->server: "+TCClassForm),
		downClass: fs.String("down-class", "", "HTB class whose sent bytes are server->client: "+TCClassForm+" (the IFB's: wlifb-eth0:1:1)"),
		upIface:   fs.String("up-iface", "", "instead of --up-class: the interface whose transmitted bytes are client->server"),
		downIface: fs.String("down-iface", "", "instead of --down-class: the interface whose received bytes are server->client"),
	}
	fs.Var(&f.comms, "comm", "watch every process whose /proc/PID/comm is `NAME`, rescanned each interval (repeat for more)")
	fs.Var(&f.pids, "pid", "watch the process with id `N` (repeat for more)")
	fs.Var(&f.trees, "tree", "watch the process with id `N` and its children of the moment, listed anew each interval (a postmaster and its backends; repeat for more)")
	return f
}

// Command checks the parsed flags; every error names the flag and the form it accepts.
func (f *SampleFlags) Command() (SampleCommand, error) {
	c := SampleCommand{Every: *f.every, For: *f.limit}
	if c.Every < 10*time.Millisecond {
		return c, fmt.Errorf("--every %v: want an interval of at least 10ms, like 1s", c.Every)
	}
	if c.For <= 0 {
		return c, fmt.Errorf("--for %v: want a positive upper bound, like 2h", c.For)
	}
	var err error
	if c.UpClass, c.UpIface, err = wireSource("up", *f.upClass, *f.upIface); err != nil {
		return c, err
	}
	if c.DownClass, c.DownIface, err = wireSource("down", *f.downClass, *f.downIface); err != nil {
		return c, err
	}
	for _, n := range f.comms {
		if len(n) > maxCommLen || strings.ContainsRune(n, '/') {
			return c, fmt.Errorf("--comm %q: want a process name of 1 to %d characters as /proc/PID/comm shows it, like mariadbd", n, maxCommLen)
		}
		c.Comms = append(c.Comms, n)
	}
	if c.PIDs, err = pidList("pid", f.pids); err != nil {
		return c, err
	}
	c.Trees, err = pidList("tree", f.trees)
	return c, err
}

// pidList parses the process ids given to --name.
func pidList(name string, vals []string) ([]int, error) {
	var out []int
	for _, s := range vals {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("--%s %q: want a process id, a positive integer like 4242", name, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// wireSource checks one direction's --DIR-class and --DIR-iface: at most one of them.
func wireSource(dir, class, iface string) (TCClass, string, error) {
	if class != "" && iface != "" {
		return TCClass{}, "", fmt.Errorf("--%s-class and --%s-iface: give one source for the %s direction, not both", dir, dir, dir)
	}
	if iface != "" && (len(iface) > 15 || strings.ContainsAny(iface, ":/ \t")) {
		return TCClass{}, "", fmt.Errorf("--%s-iface %q: want an interface name as /proc/net/dev lists it, like eth0", dir, iface)
	}
	if class == "" {
		return TCClass{}, iface, nil
	}
	c, err := ParseTCClass(class)
	if err != nil {
		return TCClass{}, "", fmt.Errorf("--%s-class: %w", dir, err)
	}
	return c, "", nil
}

// Config is the agent's configuration for c, reading procRoot with runner.
func (c SampleCommand) Config(procRoot string, runner execx.Runner, log *slog.Logger) AgentConfig {
	return AgentConfig{UpClass: c.UpClass, DownClass: c.DownClass, UpIface: c.UpIface, DownIface: c.DownIface,
		Comms: c.Comms, PIDs: c.PIDs, Trees: c.Trees, ProcRoot: procRoot, Runner: runner, Logger: log}
}

// RunAgent prints cfg's counters to w as one AgentLine at once and then once per
// c.Every, until ctx ends or c.For has passed. The first read must succeed (a host that
// cannot be read is a setup error); later failed reads are skipped, up to
// maxAgentReadFailures in a row. A failed write (nobody reads any more) ends it.
func (c SampleCommand) RunAgent(ctx context.Context, cfg AgentConfig, w io.Writer) error {
	a, err := NewAgent(cfg)
	if err != nil {
		return fmt.Errorf("agent sample: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.For)
	defer cancel()
	return a.loop(ctx, w, c.Every)
}

// loop prints a line now and one per interval until ctx ends.
func (a *Agent) loop(ctx context.Context, w io.Writer, every time.Duration) error {
	l, err := a.Line(ctx)
	if err != nil {
		return fmt.Errorf("agent sample: first read: %w", err)
	}
	if err := writeAgentLine(w, l); err != nil {
		return err
	}
	t := time.NewTicker(every)
	defer t.Stop()
	failed := 0
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		l, err := a.Line(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if failed++; failed >= maxAgentReadFailures {
				return fmt.Errorf("agent sample: %d reads in a row failed, the last: %w", failed, err)
			}
			a.log.Warn("read skipped", "err", err)
			continue
		}
		failed = 0
		if err := writeAgentLine(w, l); err != nil {
			return err
		}
	}
}

func writeAgentLine(w io.Writer, l AgentLine) error {
	b, err := l.MarshalLine()
	if err != nil {
		return fmt.Errorf("agent sample: %w", err)
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("agent sample: write line: %w", err)
	}
	return nil
}
