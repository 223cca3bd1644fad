package cli

import "github.com/wirelab/wirelab/internal/metrics"

const agentSampleExample = `wirelab agent sample --every 1s --up-class eth0:1:1 --down-class wlifb-eth0:1:1 --comm sysbench --for 2h
wirelab agent sample --every 1s --comm mariadbd
wirelab agent sample --up-iface eth0 --down-iface eth0 --pid 4242
wirelab agent sample --every 1s --tree 4242`

// cmdAgentSample is `wirelab agent sample` (metrics.SampleCommand): the host's counters as
// JSON lines until SIGTERM/SIGINT or --for. It is started detached over SSH, so the end
// of stdin means nothing.
func cmdAgentSample(p *Process, args []string) error {
	fs := newFlagSet(p, "agent sample", "internal: print this host's wire and CPU counters as JSON lines, once per interval", agentSampleExample)
	f := metrics.AddSampleFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("agent sample: unexpected argument %q; every setting is a flag", fs.Arg(0))
	}
	c, err := f.Command()
	if err != nil {
		return &UsageError{err}
	}
	ctx, stop := untilInterrupt(p)
	defer stop()
	return c.RunAgent(ctx, c.Config(p.procRoot(), p.Runner, p.Logger), p.Stdout)
}
