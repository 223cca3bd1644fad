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

// The transport study's socat path end to end, on each engine: two real socat hops carry
// sysbench from a unix socket in the client host to the server's socket in the server host
// (MariaDB's socket file; PostgreSQL's .s.PGSQL.5432 in a directory, as libpq wants it),
// and nothing of them is left afterwards.
func TestTransportRemoteSocketThroughSocat(t *testing.T) {
	skipUnlessRoot(t)
	if _, err := exec.LookPath("socat"); err != nil {
		nstest.Unavailable(t, "needs socat (make deps)")
	}
	for _, engine := range []string{"mariadb", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			if engine == "postgres" {
				skipUnlessPostgres(t)
			}
			transportThroughSocat(t, engine)
		})
	}
}

func transportThroughSocat(t *testing.T, engine string) {
	state, out := t.TempDir(), t.TempDir()
	wl(t, state, "study", "transport", "--engine", engine, "--paths", "remote-tcp,remote-socket", "--duration", "3s",
		"--warmup", "1s", "--tables", "1", "--table-size", "1000", "--out", out)
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Points []struct {
			Transport string  `json:"transport"`
			TPS       float64 `json:"tps"`
			Failed    bool    `json:"failed"`
			Up        float64 `json:"wire_bytes_per_s_up"`
		} `json:"points"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, p := range r.Points {
		if p.Failed || p.TPS <= 0 || p.Up <= 0 {
			t.Errorf("%s: TPS %v, wire up %v B/s, failed %v: want transactions across the wire", p.Transport, p.TPS, p.Up, p.Failed)
		}
		got[p.Transport] = p.TPS
	}
	if len(got) != 2 || got["remote-socket"] <= 0 {
		t.Fatalf("points %v", got)
	}
	if ps, _ := exec.Command("pgrep", "-af", "socat").Output(); strings.Contains(string(ps), "remote-socket") {
		t.Errorf("socat left running:\n%s", ps)
	}
	if ids, _ := os.ReadDir(state); len(ids) != 0 {
		t.Errorf("lab state left: %v", ids)
	}
	if md, _ := os.ReadFile(filepath.Join(out, "report.md")); !strings.Contains(string(md), "% of socket") {
		t.Errorf("report lacks the transport table")
	}
}
