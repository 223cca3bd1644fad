package remote

import (
	"context"
	"fmt"
	"path"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/study"
)

// DryRun prints what st would do on the hosts, host by host, without contacting any:
// the checks, the staging of wirelab, the shaping of each link the study measures on,
// the server's start (its agent and client files) and the teardown. o.DryRun receives
// the lines.
func DryRun(ctx context.Context, o Options, st study.Study) error {
	if o.DryRun == nil {
		return fmt.Errorf("dry run: no writer for the commands")
	}
	needs := st.Needs()
	b, err := Open(ctx, o, needs)
	if err != nil {
		return err
	}
	conds := []link.Condition{needs.Condition}
	for {
		c, ok := st.Next(nil)
		if !ok {
			break
		}
		if w := c.Wire(); w != nil && !containsCond(conds, *w) {
			conds = append(conds, *w)
			if err := b.Shape(ctx, *w); err != nil {
				return err
			}
		}
	}
	// The server's start as StartServer does it, without waiting for a state file no
	// agent writes: the directory, the agent, its client files copied to the client.
	so := b.serverOptions(needs.Servers[0]).withDefaults(b.engine)
	if _, err := b.server.h.Run(ctx, "chmod", "0711", b.server.stage.Dir); err != nil {
		return err
	}
	if _, err := b.server.h.Run(ctx, "mkdir", "-p", "--", so.Dir); err != nil {
		return err
	}
	agent, err := b.server.h.Start(ctx, string(so.Engine)+"-agent", so.agentArgv(), path.Join(so.Dir, AgentLog(so.Engine)))
	if err != nil {
		return err
	}
	if _, err := b.copyClientFiles(ctx, path.Join(so.Dir, "certs")); err != nil {
		return err
	}
	b.track(agent)
	return b.Down(ctx)
}

func containsCond(cs []link.Condition, c link.Condition) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}
