package remote

import (
	"context"
	"fmt"

	"github.com/wirelab/wirelab/internal/hosts"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/study"
)

// ReadShaping implements study.Backend: each far host's link read back through its host
// against the plan that shaped it (hosts.RemoteLink.Read), named by its host, with how
// often its sample agents found a shaped class missing so far. A dry run's hosts answer
// nothing: it reads nothing.
func (b *Backend) ReadShaping(ctx context.Context) ([]link.Reading, error) {
	if b.o.DryRun != nil {
		return nil, nil
	}
	out := make([]link.Reading, 0, len(b.links))
	for i, l := range b.links {
		r, err := l.Read(ctx)
		if err != nil {
			return nil, err
		}
		r.Link, r.Host = b.far+" "+b.clients[i].inv.Name, b.farRole(i)
		b.mu.Lock()
		r.Gone = b.gone[i]
		b.mu.Unlock()
		out = append(out, r)
	}
	return out, nil
}

// farRole is the lab role of the i-th far host: the replica, or the i-th client.
func (b *Backend) farRole(i int) string {
	if b.far == lab.Replica {
		return lab.Replica
	}
	return study.ClientRole(i)
}

// noteGone adds n reads in which the i-th far host's sample agent found a shaped class
// missing.
func (b *Backend) noteGone(i int, n uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gone == nil {
		b.gone = map[int]uint64{}
	}
	b.gone[i] += n
}

// checkPlaces refuses, before anything is made, clients that would shape each other's
// NIC: two in one network stack of one machine (the delay line's iptables chain and every
// route are that stack's), or two that see one machine's /run and shape NICs of one name
// (the delay line's pid file there is named after the NIC, so one client's teardown would
// stop the other's delay line). Each client's place is read with hosts.ReadPlace; a dry
// run's hosts have none, and pass.
func (b *Backend) checkPlaces(ctx context.Context) error {
	if len(b.clients) < 2 {
		return nil
	}
	places := make([]hosts.Place, len(b.clients))
	for i, c := range b.clients {
		p, err := hosts.ReadPlace(ctx, c.h)
		if err != nil {
			return err
		}
		places[i] = p
	}
	return samePlaces(b.o.Inventory.Path, b.clients, places)
}

// samePlaces is checkPlaces' rule on the places read.
func samePlaces(file string, cls []*host, places []hosts.Place) error {
	for i := range cls {
		for j := i + 1; j < len(cls); j++ {
			a, c := cls[i].inv, cls[j].inv
			switch {
			case places[i].SharesNet(places[j]):
				return fmt.Errorf("%s: clients %s and %s are one network stack (network namespace %s of one machine): their shaping would be one NIC's and one set of rules; "+
					"list the machine once, or give each client a network namespace of its own", file, a.Name, c.Name, places[i].Net)
			case places[i].SharesRun(places[j]) && a.NIC == c.NIC:
				return fmt.Errorf("%s: clients %s and %s are one machine (they share its /run) and both shape a NIC named %s: wirelab keeps a shaped NIC's delay line by the NIC's name in /run, "+
					"so one client's teardown would stop the other's; give the NICs different names, or put the clients on different machines", file, a.Name, c.Name, a.NIC)
			}
		}
	}
	return nil
}
