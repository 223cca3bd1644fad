package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/nstest"
)

func skipUnlessPostgres(t *testing.T) {
	t.Helper()
	skipUnlessRoot(t)
	if _, err := exec.LookPath("psql"); err != nil {
		nstest.Unavailable(t, "needs PostgreSQL 15 (make deps)")
	}
}

// A PostgreSQL lab: psql inside `wirelab exec` reaches the bench database with no flags
// (the PG* environment), across the wire, and `down` leaves nothing.
func TestPostgresUpExecDown(t *testing.T) {
	skipUnlessPostgres(t)
	state := t.TempDir()
	wl(t, state, "up", "--engine", "postgres", "--rate", "50mbit")
	id := labRunID(t, state)
	if id == "" {
		t.Fatal("no lab state after up")
	}
	t.Cleanup(func() { wl(t, state, "down", "--lab", id); assertGone(t, id) })
	status := wl(t, state, "status")
	for _, want := range []string{"postgres", "postgres://", "PGHOST=198.18.0.2", "PGSSLMODE=disable", "WIRELAB_ENGINE=postgres"} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}
	out := wl(t, state, "exec", "client", "--", "psql", "-tAc", "select inet_server_addr()::text || ' ' || current_user || ' ' || current_database()")
	if got := strings.TrimSpace(out); got != "198.18.0.2/32 sbtest sbtest" {
		t.Errorf("psql from the client host: %q, want the server's lab address, the bench role and database", got)
	}
	// sslmode=require through the same environment: the server's certificate set is live.
	tls := wl(t, state, "exec", "client", "--", "sh", "-c", "PGSSLMODE=require psql -tAc 'select ssl from pg_stat_ssl where pid = pg_backend_pid()'")
	if strings.TrimSpace(tls) != "t" {
		t.Errorf("PGSSLMODE=require: pg_stat_ssl says %q, want t", tls)
	}
	wl(t, state, "down")
	assertGone(t, id)
}

// `wirelab run --engine postgres` through the tunnel: sysbench's pgsql driver reaches the
// server through the tunnel's entry, the results name the engine and its settings, and
// the lab is gone afterwards.
func TestPostgresRunThroughTunnel(t *testing.T) {
	skipUnlessPostgres(t)
	state, out := t.TempDir(), t.TempDir()
	wl(t, state, "run", "--engine", "postgres", "--rate", "20mbit", "--threads", "4", "--duration", "3s", "--warmup", "1s",
		"--tables", "1", "--table-size", "10000", "--channel", "tunnel", "--out", out)
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Environment struct {
			Server struct {
				Engine   string `json:"engine"`
				Version  string `json:"version"`
				Settings []struct {
					Name, Value string
				} `json:"settings"`
			} `json:"server"`
		} `json:"environment"`
		Points []struct {
			Channel string  `json:"channel"`
			TPS     float64 `json:"tps"`
			Failed  bool    `json:"failed"`
			Down    float64 `json:"wire_bytes_per_s_down"`
		} `json:"points"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	srv := r.Environment.Server
	if srv.Engine != "postgres" || !strings.Contains(srv.Version, "PostgreSQL") || len(srv.Settings) == 0 {
		t.Errorf("environment.server = %+v, want PostgreSQL with its settings", srv)
	}
	if len(r.Points) != 1 || r.Points[0].Failed || r.Points[0].TPS <= 0 || r.Points[0].Channel != "tunnel" || r.Points[0].Down <= 0 {
		t.Errorf("points %+v: want one tunnel point with transactions and wire bytes", r.Points)
	}
	assertTunnelLogs(t, out)
	if ids, _ := os.ReadDir(state); len(ids) != 0 {
		t.Errorf("lab state left: %v", ids)
	}
	if ps, _ := exec.Command("pgrep", "-af", "postgres: ").Output(); strings.Contains(string(ps), "wirelab-") {
		t.Errorf("postgres left running:\n%s", ps)
	}
}
