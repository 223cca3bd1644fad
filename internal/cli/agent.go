package cli

import (
	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/hosts"
)

// cmdAgent is what wirelab runs on a remote host it copied itself to: the dead-man switch
// that removes the shaping of a NIC when wirelab stops renewing it (hosts.DeadmanCommand),
// the sampler that prints the host's counters once per interval (agent_sample.go,
// metrics.SampleCommand), the database server of a study (agent_server.go, remote.Serve),
// and the host's facts for the report and the verdicts (agent_facts.go). Each tool's
// command line is written and parsed by the package that starts it; cli only wires it.
func cmdAgent(p *Process, args []string) error {
	tool := ""
	if len(args) > 0 {
		tool = args[0]
	}
	switch tool {
	case "deadman":
	case "sample":
		return cmdAgentSample(p, args[1:])
	case string(engine.MariaDB), string(engine.Postgres):
		return cmdAgentServer(p, engine.Kind(tool), args[1:])
	case "facts":
		return cmdAgentFacts(p, args[1:])
	default:
		return usagef("agent: want a tool: deadman, sample, mariadb, postgres, facts")
	}
	fs := newFlagSet(p, "agent deadman", "internal: remove a NIC's shaping unless the renewal file is touched within the TTL",
		"wirelab agent deadman --ttl 30s --renew /tmp/wirelab-x/deadman.renew --undo /tmp/wirelab-x/deadman.undo")
	f := hosts.AddDeadmanFlags(fs)
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	c, err := f.Command()
	if err != nil {
		return &UsageError{err}
	}
	ctx, stop := untilInterrupt(p) // SIGTERM from Clear, or anyone's: undo, then exit
	defer stop()
	return c.Run(ctx, execx.OS{}, p.Logger.With("component", "deadman"))
}
