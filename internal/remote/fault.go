package remote

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/wirelab/wirelab/internal/hosts"
)

// DropWire implements study.WireDropper: the host across the wire (role names it; the
// server's own host has no shaped NIC) drops everything to and from the server's data
// address but the SSH ports (hosts.PlanDrop), until restore. The dead-man switch's undo,
// Down and `down --hosts` remove the rules too (hosts.UndoShape), so a kill -9 in the
// middle of a fault does not leave the link dead.
func (b *Backend) DropWire(ctx context.Context, role string) (func() error, error) {
	h := b.hostOf(role)
	if h == b.server {
		return nil, fmt.Errorf("drop the wire: the server's host %s has no shaped NIC; drop it on the host across the wire", h.inv.Name)
	}
	r := hosts.Runner(h.h)
	var once sync.Once
	var rerr error
	restore := func() error {
		once.Do(func() {
			if err := hosts.RunUndo(context.WithoutCancel(ctx), r, hosts.UndoDrop()); err != nil {
				rerr = fmt.Errorf("host %s: restore the wire: %w", h.inv.Name, err)
			}
		})
		return rerr
	}
	for _, c := range hosts.PlanDrop(b.targetOf(h)) {
		if _, err := r.Run(ctx, c[0], c[1:]...); err != nil {
			return nil, errors.Join(fmt.Errorf("host %s: drop the wire to %s: %w", h.inv.Name, b.targetOf(h).Peer, err), restore())
		}
	}
	return restore, nil
}
