package remote

import (
	"context"
	"errors"
	"fmt"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/study"
)

// DryRun prints what st would do on the hosts, host by host, without contacting any:
// the checks, the staging of wirelab, the shaping of the wire, the server's start (its
// agent and client files), the data set's preparation, the study's helpers, each point's
// wire, sample agents and load driver on the host that runs it (study.Plan), and the
// teardown. o.DryRun receives the lines.
func DryRun(ctx context.Context, o Options, st study.Study) (err error) {
	if o.DryRun == nil {
		return fmt.Errorf("dry run: no writer for the commands")
	}
	needs := st.Needs()
	b, err := Open(ctx, o, needs)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, b.Down(context.WithoutCancel(ctx))) }()
	var servers []engine.Server
	for _, sv := range needs.Servers {
		s, err := b.StartServer(ctx, sv)
		if err != nil {
			return err
		}
		servers = append(servers, s)
	}
	return study.Plan(ctx, b, st, servers, o.DryRun)
}
