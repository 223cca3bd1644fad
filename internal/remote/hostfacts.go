package remote

import (
	"context"
	"fmt"

	"github.com/wirelab/wirelab/internal/hostinfo"
	"github.com/wirelab/wirelab/internal/result"
)

// readFacts asks h's agent what h is (cores, CPU model, memory, kernel, clock source),
// labelled with its role and inventory name. A dry run prints the command and records
// nothing: no host was asked.
func (b *Backend) readFacts(ctx context.Context, h *host, role string) (result.Host, bool, error) {
	out, err := h.h.Run(ctx, h.stage.Agent, "agent", "facts")
	if err != nil {
		return result.Host{}, false, fmt.Errorf("host %s: read its cores, CPU and kernel: %w", h.inv.Name, err)
	}
	if b.o.DryRun != nil {
		return result.Host{}, false, nil
	}
	f, err := hostinfo.Parse(out)
	if err != nil {
		return result.Host{}, false, fmt.Errorf("host %s: read its cores, CPU and kernel: %w", h.inv.Name, err)
	}
	f.Role, f.Name = role, h.inv.Name
	return f, true, nil
}

// readAllFacts reads every host's facts once, after staging: the verdicts of the whole
// study weigh each side against them.
func (b *Backend) readAllFacts(ctx context.Context) error {
	for _, h := range b.all() { // an existing server's host is not logged in to, so not known
		role := b.far // the client hosts', or the replica's
		if h == b.server {
			role = "server"
		}
		f, ok, err := b.readFacts(ctx, h, role)
		if err != nil {
			return err
		}
		if ok {
			b.facts = append(b.facts, f)
		}
	}
	return nil
}

// Hosts implements study.HostReporter: the client hosts and the server host as their
// agents read them.
func (b *Backend) Hosts() []result.Host { return append([]result.Host(nil), b.facts...) }
