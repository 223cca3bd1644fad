package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/hosts"
	"github.com/wirelab/wirelab/internal/inventory"
)

// runMarker is the file in every directory wirelab stages on a host: it names the run,
// so `down --hosts` removes wirelab's directories and nothing else.
const runMarker = "wirelab-run"

// state is a run's remote footprint, mirrored on this machine.
type state struct {
	ID        string    `json:"id"`
	Inventory string    `json:"inventory"`
	Started   time.Time `json:"started"`
	Dirs      []hostDir `json:"dirs"`
	NIC       string    `json:"nic"` // the client's shaped NIC
}

type hostDir struct {
	Host string `json:"host"`
	Dir  string `json:"dir"`
}

func (b *Backend) statePath() string {
	return filepath.Join(b.o.StateDir, "hosts-"+b.id+".json")
}

// save writes the local mirror of the run's remote state and each host's marker.
func (b *Backend) save() error {
	if b.o.DryRun != nil || b.o.StateDir == "" {
		return nil
	}
	st := state{ID: b.id, Inventory: b.o.Inventory.Path, Started: time.Now().UTC(), NIC: b.client.inv.NIC}
	for _, h := range []*host{b.client, b.server} {
		if h != nil && h.stage.Dir != "" {
			st.Dirs = append(st.Dirs, hostDir{Host: h.inv.Name, Dir: h.stage.Dir})
		}
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(b.o.StateDir, 0o755); err != nil {
		return fmt.Errorf("record the remote state: %w", err)
	}
	if err := os.WriteFile(b.statePath(), data, 0o600); err != nil {
		return fmt.Errorf("record the remote state: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, h := range []*host{b.client, b.server} {
		if h != nil && h.stage.Dir != "" {
			if err := h.h.Copy(ctx, strings.NewReader(b.id+"\n"), path.Join(h.stage.Dir, runMarker), 0o644); err != nil {
				return fmt.Errorf("record the remote state: %w", err)
			}
		}
	}
	return nil
}

// cleanScript stops every process that runs a wirelab staged in a marked directory
// (agents: the MariaDB one stops its server on TERM), KILLs what is left after 10 s,
// KILLs a server whose agent died first, and removes the directory. $1 is the directory.
const cleanScript = `d="$1"; [ -f "$d/` + runMarker + `" ] || exit 0
pkill -TERM -f "^$d/wirelab " ; i=0
while [ $i -lt 100 ] && pgrep -f "^$d/wirelab " >/dev/null; do sleep 0.1; i=$((i+1)); done
pkill -KILL -f "^$d/wirelab "
for p in $(grep -ho '"pid": *[0-9]*' "$d"/mariadb/server.json 2>/dev/null | grep -o '[0-9]*$'); do kill -KILL "$p" 2>/dev/null; done
rm -rf -- "$d"`

// Down removes what any wirelab run made on the inventory's hosts: on each host every
// marked wirelab directory (its processes first), and on the client the NIC's shaping
// and its dead-man switch. It needs no state from the run (a kill -9 leaves none
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
		if ih.Role == inventory.Client && ih.NIC != "" {
			if err := hosts.ClearNIC(ctx, h.h, ih.NIC); err != nil {
				errs = append(errs, err)
			}
		}
		h.h.Close()
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if o.StateDir != "" {
		ms, _ := filepath.Glob(filepath.Join(o.StateDir, "hosts-*.json"))
		for _, m := range ms {
			var st state
			if b, err := os.ReadFile(m); err == nil && json.Unmarshal(b, &st) == nil && st.Inventory == inv.Path {
				_ = os.Remove(m)
			}
		}
	}
	return nil
}
