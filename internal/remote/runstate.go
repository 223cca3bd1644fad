package remote

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/wirelab/wirelab/internal/hosts"
	"github.com/wirelab/wirelab/internal/inventory"
)

// runMarker is the file in every directory wirelab stages on a host: it names the run,
// so `down --hosts` removes wirelab's directories and nothing else.
const runMarker = "wirelab-run"

// mark writes the run marker into each host's wirelab directory, right after staging
// and before anything runs from it.
func (b *Backend) mark(ctx context.Context) error {
	for _, h := range []*host{b.client, b.server} {
		if err := h.h.Copy(ctx, strings.NewReader(b.id+"\n"), path.Join(h.stage.Dir, runMarker), 0o644); err != nil {
			return fmt.Errorf("mark wirelab's directory: %w", err)
		}
	}
	return nil
}

// cleanScript stops every process that runs a wirelab staged in a marked directory
// (agents: a server's agent stops its server on TERM), KILLs what is left after 10 s,
// KILLs a server whose agent died first (with its children: a postmaster's backends),
// while its pid still names a server, then stops the study's helpers (transport's socat
// hops, a load driver left over): every process whose command line names a path in the
// directory, TERM then KILL after 2 s. Last it removes the directory. $1 is the
// directory; the script's own command line holds it with no slash after it, so it never
// matches itself.
const cleanScript = `d="$1"; [ -f "$d/` + runMarker + `" ] || exit 0
pkill -TERM -f "^$d/wirelab " ; i=0
while [ $i -lt 100 ] && pgrep -f "^$d/wirelab " >/dev/null; do sleep 0.1; i=$((i+1)); done
pkill -KILL -f "^$d/wirelab "
for p in $(grep -ho '"pid": *[0-9]*' "$d"/*/server.json 2>/dev/null | grep -o '[0-9]*$'); do
  case "$(cat /proc/$p/comm 2>/dev/null)" in mariadbd|mysqld|postgres)
    kill -STOP "$p"; pkill -KILL -P "$p"; kill -KILL "$p";; esac
done
pkill -TERM -f "$d/" ; i=0
while [ $i -lt 20 ] && pgrep -f "$d/" >/dev/null; do sleep 0.1; i=$((i+1)); done
pkill -KILL -f "$d/"
rm -rf -- "$d"`

// Down removes what any wirelab run made on the inventory's hosts: on each host every
// marked wirelab directory (its processes first: servers' agents, tunnel ends, helpers),
// and on the client and a replica with a nic the NIC's shaping and its dead-man switch. It needs no state from the run (a kill -9 leaves none
// behind it), so it works from any machine that reaches the hosts. It tries every host.
func Down(ctx context.Context, o Options) error {
	inv := o.Inventory
	b := &Backend{o: o}
	var errs []error
	for _, ih := range inv.Hosts {
		h, err := b.connect(ctx, ih)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := b.checkLogin(ctx, h); err != nil {
			errs = append(errs, err)
			h.h.Close()
			continue
		}
		out, err := h.h.Run(ctx, "sh", "-c", "ls -d /tmp/wirelab-*/"+runMarker+" 2>/dev/null; exit 0")
		if err != nil {
			errs = append(errs, err)
		}
		for _, m := range strings.Fields(string(out)) {
			dir := path.Dir(m)
			if _, err := h.h.Run(ctx, "sh", "-c", cleanScript, "sh", dir); err != nil {
				errs = append(errs, fmt.Errorf("host %s: clean %s: %w", ih.Name, dir, err))
			}
		}
		// The client's NIC is shaped by run and the studies, the replica's by replication.
		if (ih.Role == inventory.Client || ih.Role == inventory.Replica) && ih.NIC != "" {
			if err := hosts.ClearNIC(ctx, h.h, ih.NIC); err != nil {
				errs = append(errs, err)
			}
		}
		h.h.Close()
	}
	return errors.Join(errs...)
}
