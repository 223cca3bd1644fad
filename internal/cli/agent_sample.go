package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/metrics"
)

const agentSampleExample = `wirelab agent sample --every 1s --up-class eth0:1:1 --down-class wlifb-eth0:1:1 --comm sysbench --for 2h
wirelab agent sample --every 1s --comm mariadbd
wirelab agent sample --up-iface eth0 --down-iface eth0 --pid 4242
wirelab agent sample --every 1s --tree 4242`

// maxAgentReadFailures bounds how many reads in a row may fail before the agent gives up:
// an agent that can no longer read its counters must end, not print nothing for hours.
const maxAgentReadFailures = 10

// agentSampleOptions are agent sample's flags, validated.
type agentSampleOptions struct {
	every, limit time.Duration
	agent        metrics.AgentConfig
}

// cmdAgentSample prints the host's cumulative counters as one JSON line (metrics.AgentLine)
// at once and then once per --every, until SIGTERM/SIGINT or --for. It is started
// detached over SSH, so the end of stdin means nothing; a failed write to stdout (nobody
// reads any more) ends it.
func cmdAgentSample(p *Process, args []string) error {
	o, err := parseAgentSample(p, args)
	if err != nil {
		return err
	}
	o.agent.ProcRoot, o.agent.Runner = p.procRoot(), p.Runner
	o.agent.Logger = p.Logger
	a, err := metrics.NewAgent(o.agent)
	if err != nil {
		return fmt.Errorf("agent sample: %w", err)
	}
	limited, cancelLimit := context.WithTimeout(context.Background(), o.limit)
	defer cancelLimit()
	ctx, cancel := p.untilInterrupt(limited)
	defer cancel()
	return sampleLoop(ctx, a, p.Stdout, o.every, p.Logger.With("component", "agent sample"))
}

// sampleLoop prints a line now and one per interval until ctx ends. The first read must
// succeed (a host that cannot be read is a setup error); later failed reads are skipped,
// up to maxAgentReadFailures in a row.
func sampleLoop(ctx context.Context, a *metrics.Agent, w io.Writer, every time.Duration, log *slog.Logger) error {
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
			log.Warn("read skipped", "err", err)
			continue
		}
		failed = 0
		if err := writeAgentLine(w, l); err != nil {
			return err
		}
	}
}

func writeAgentLine(w io.Writer, l metrics.AgentLine) error {
	b, err := l.MarshalLine()
	if err != nil {
		return fmt.Errorf("agent sample: %w", err)
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("agent sample: write line: %w", err)
	}
	return nil
}

// parseAgentSample parses and checks the flags; every error names the flag and the form
// it accepts.
func parseAgentSample(p *Process, args []string) (agentSampleOptions, error) {
	fs := newFlagSet(p, "agent sample", "internal: print this host's wire and CPU counters as JSON lines, once per interval", agentSampleExample)
	every := fs.Duration("every", time.Second, "interval between lines, at least 10ms")
	limit := fs.Duration("for", 2*time.Hour, "stop after this long, whatever happens (required upper bound)")
	upClass := fs.String("up-class", "", "HTB class whose sent bytes are client->server: "+metrics.TCClassForm)
	downClass := fs.String("down-class", "", "HTB class whose sent bytes are server->client: "+metrics.TCClassForm+" (the IFB's: wlifb-eth0:1:1)")
	upIface := fs.String("up-iface", "", "instead of --up-class: the interface whose transmitted bytes are client->server")
	downIface := fs.String("down-iface", "", "instead of --down-class: the interface whose received bytes are server->client")
	var comms, pids listFlag
	fs.Var(&comms, "comm", "watch every process whose /proc/PID/comm is `NAME`, rescanned each interval (repeat for more)")
	fs.Var(&pids, "pid", "watch the process with id `N` (repeat for more)")
	var trees listFlag
	fs.Var(&trees, "tree", "watch the process with id `N` and its children of the moment, listed anew each interval (a postmaster and its backends; repeat for more)")
	if err := parseFlags(fs, args); err != nil {
		return agentSampleOptions{}, err
	}
	if fs.NArg() > 0 {
		return agentSampleOptions{}, usagef("agent sample: unexpected argument %q; every setting is a flag", fs.Arg(0))
	}
	o := agentSampleOptions{every: *every, limit: *limit}
	if o.every < 10*time.Millisecond {
		return o, usagef("--every %v: want an interval of at least 10ms, like 1s", o.every)
	}
	if o.limit <= 0 {
		return o, usagef("--for %v: want a positive upper bound, like 2h", o.limit)
	}
	var err error
	if o.agent.UpClass, o.agent.UpIface, err = wireSource("up", *upClass, *upIface); err != nil {
		return o, err
	}
	if o.agent.DownClass, o.agent.DownIface, err = wireSource("down", *downClass, *downIface); err != nil {
		return o, err
	}
	for _, c := range comms {
		if len(c) > 15 || strings.ContainsRune(c, '/') {
			return o, usagef("--comm %q: want a process name of 1 to 15 characters as /proc/PID/comm shows it, like mariadbd", c)
		}
		o.agent.Comms = append(o.agent.Comms, c)
	}
	for _, s := range pids {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return o, usagef("--pid %q: want a process id, a positive integer like 4242", s)
		}
		o.agent.PIDs = append(o.agent.PIDs, n)
	}
	for _, s := range trees {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return o, usagef("--tree %q: want a process id, a positive integer like 4242", s)
		}
		o.agent.Trees = append(o.agent.Trees, n)
	}
	return o, nil
}

// wireSource checks one direction's --DIR-class and --DIR-iface: at most one of them.
func wireSource(dir, class, iface string) (metrics.TCClass, string, error) {
	if class != "" && iface != "" {
		return metrics.TCClass{}, "", usagef("--%s-class and --%s-iface: give one source for the %s direction, not both", dir, dir, dir)
	}
	if iface != "" && (len(iface) > 15 || strings.ContainsAny(iface, ":/ \t")) {
		return metrics.TCClass{}, "", usagef("--%s-iface %q: want an interface name as /proc/net/dev lists it, like eth0", dir, iface)
	}
	if class == "" {
		return metrics.TCClass{}, iface, nil
	}
	c, err := metrics.ParseTCClass(class)
	if err != nil {
		return metrics.TCClass{}, "", usagef("--%s-class: %v", dir, err)
	}
	return c, "", nil
}
