package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/hosts"
	"github.com/wirelab/wirelab/internal/inventory"
)

// runMarker is the file in every directory wirelab stages on a host: it names the run,
// so `down --hosts` removes wirelab's directories and nothing else.
const runMarker = "wirelab-run"

// mark writes the run marker into each host's wirelab directory, right after staging
// and before anything runs from it.
func (b *Backend) mark(ctx context.Context) error {
	for _, h := range b.all() {
		if err := h.h.Copy(ctx, strings.NewReader(b.id+"\n"), path.Join(h.stage.Dir, runMarker), 0o644); err != nil {
			return fmt.Errorf("mark wirelab's directory: %w", err)
		}
	}
	return nil
}

// tablesRecord is the file in the client's wirelab directory that names the tables a
// run creates on an existing server: written before they are prepared, removed with the
// directory once the run has dropped them, so one that `down --hosts` finds names the
// tables of a run that ended before it could (a kill -9).
const tablesRecord = "existing-tables.json"

// TablesRecord is tablesRecord's content.
type TablesRecord struct {
	DSN    string   `json:"dsn"`
	Tables []string `json:"tables"`
}

// recordTables writes the tables record of the existing server x on the client.
func (b *Backend) recordTables(ctx context.Context, x *engine.External, tables []string) error {
	data, err := json.Marshal(TablesRecord{DSN: x.DSN().String(), Tables: tables})
	if err != nil {
		return err
	}
	if err := b.clients[0].h.Copy(ctx, strings.NewReader(string(data)+"\n"), path.Join(b.clients[0].stage.Dir, tablesRecord), 0o644); err != nil {
		return fmt.Errorf("record the tables wirelab creates on %s: %w", x.DSN(), err)
	}
	return nil
}

// leftTables drops the tables a run recorded in dir on the client and did not drop,
// through o.DropExisting; a record of another server than the inventory's is an error
// that names the tables, left alone.
func leftTables(ctx context.Context, o Options, h *host, dir string) error {
	out, err := h.h.Run(ctx, "sh", "-c", `cat -- "$1/`+tablesRecord+`" 2>/dev/null; exit 0`, "sh", dir)
	if err != nil || strings.TrimSpace(string(out)) == "" {
		return err
	}
	var r TablesRecord
	if err := json.Unmarshal(out, &r); err != nil {
		return fmt.Errorf("host %s: read %s/%s: %w", h.inv.Name, dir, tablesRecord, err)
	}
	sv := o.Inventory.Role(inventory.Server)[0]
	d, err := engine.ParseDSN(sv.Server.DSN)
	if !sv.Existing() || err != nil || d.String() != r.DSN || o.DropExisting == nil {
		return fmt.Errorf("host %s: a run left tables %s on %s, which this inventory's server is not: drop them there by hand",
			h.inv.Name, strings.Join(r.Tables, ", "), r.DSN)
	}
	if err := o.DropExisting(ctx, r.Tables); err != nil {
		return fmt.Errorf("host %s: drop the tables a run left on %s: %w", h.inv.Name, r.DSN, err)
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
// on every client and a replica with a nic the NIC's shaping and its dead-man switch, and
// the tables a run recorded on an existing server and did not drop (o.DropExisting). It
// needs no state from the run on this machine (a kill -9 leaves none behind it), so it
// works from any machine that reaches the hosts. An existing server's host is not logged
// in to. It tries every host.
func Down(ctx context.Context, o Options) error {
	inv := o.Inventory
	b := &Backend{o: o}
	var errs []error
	for _, ih := range inv.Hosts {
		if ih.Existing() {
			continue // wirelab never logs in to an existing server's host: nothing of it there
		}
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
			if ih.Role == inventory.Client {
				errs = append(errs, leftTables(ctx, o, h, dir))
			}
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
