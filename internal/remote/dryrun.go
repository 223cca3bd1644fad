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
// the server's start and the teardown. o.DryRun receives the lines.
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
	sv := needs.Servers[0]
	mo := MariaDBOptions{Agent: b.server.stage.Agent, Dir: path.Join(b.server.stage.Dir, "mariadb"),
		Bind: b.server.inv.PeerAddress(), BufferPool: sv.DB.BufferPool}
	mo = mo.withDefaults()
	if _, err := b.server.h.Start(ctx, "mariadb", mo.agentArgv(), path.Join(mo.Dir, AgentLog)); err != nil {
		return err
	}
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
