package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/hosts"
)

// cmdAgent is what wirelab runs on a remote host it copied itself to: the dead-man switch
// that removes the shaping of a NIC when wirelab stops renewing it, the sampler that prints
// the host's counters once per interval (agent_sample.go), the database server of a
// study (agent_server.go: agent_mariadb.go, agent_postgres.go), and the host's facts for
// the report and the verdicts (agent_facts.go).
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
	ttl := fs.Duration("ttl", 0, "how old the renewal file's mtime may get before the undo runs")
	renew := fs.String("renew", "", "the renewal file wirelab touches")
	undoPath := fs.String("undo", "", "the undo file: tc, ip and iptables commands, one a line")
	delayerPid := fs.String("delayer-pid", "", "the delay line's pid file: the delayer it names is stopped after the undo")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *ttl <= 0 || *renew == "" || *undoPath == "" {
		return usagef("agent deadman: --ttl, --renew and --undo are required")
	}
	b, err := os.ReadFile(*undoPath)
	if err != nil {
		return fmt.Errorf("agent deadman: %w", err)
	}
	undo, err := hosts.ParseUndo(string(b))
	if err != nil {
		return fmt.Errorf("agent deadman: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-p.Interrupts: // SIGTERM from Clear, or anyone's: undo, then exit
			cancel()
		case <-ctx.Done():
		}
	}()
	d := &hosts.Deadman{Renew: *renew, TTL: *ttl, Undo: undo, DelayerPid: *delayerPid, Runner: execx.OS{},
		Log: p.Logger.With("component", "deadman")}
	if err := d.Watch(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("agent deadman: %w", err)
	}
	return nil
}
