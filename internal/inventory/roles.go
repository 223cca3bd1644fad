package inventory

import (
	"errors"
	"fmt"
)

// where names host i as every error does: "hosts[i] (name)".
func (inv *Inventory) where(i int) string {
	return fmt.Sprintf("hosts[%d] (%s)", i, inv.Hosts[i].Name)
}

// Clients are the inventory's clients, for the studies that load a server from them (run,
// bandwidth, transport); an inventory with a replica may have none.
func (inv *Inventory) Clients() ([]Host, error) {
	cs := inv.Role(Client)
	if len(cs) == 0 {
		return nil, errors.New("hosts: 0 with role client; this study runs sysbench on one or more (role: client, with nic)")
	}
	return cs, nil
}

// ReplicaFor is the inventory's replica for study replication, whose replica runs a
// server of engine start: exactly one host with role replica, with a nic (the interface
// shaped toward the server, as a client's in `run`) and server: {start: <start>}. A
// client entry is not its business: the study ignores it.
func (inv *Inventory) ReplicaFor(start string) (Host, error) {
	var idx []int
	for i, h := range inv.Hosts {
		if h.Role == Replica {
			idx = append(idx, i)
		}
	}
	if len(idx) != 1 {
		return Host{}, fmt.Errorf("hosts: %d with role replica; study replication needs exactly one (role: replica, nic, server: {start: %s})", len(idx), start)
	}
	i := idx[0]
	h, w := inv.Hosts[i], inv.where(i)
	var errs []error
	if h.NIC == "" {
		errs = append(errs, fmt.Errorf("%s: nic: missing: the replica's interface toward the server, the one wirelab shapes (ip route get <server address>)", w))
	}
	if h.Server == nil || h.Server.Start == "" {
		errs = append(errs, fmt.Errorf("%s: server: want {start: %s}: study replication starts the replica on this host (an existing server cannot be one)", w, start))
	} else if h.Server.Start != start {
		errs = append(errs, fmt.Errorf("%s: server: start %s, and the study's --engine is %s: set start: %s", w, h.Server.Start, start, start))
	}
	return h, errors.Join(errs...)
}
