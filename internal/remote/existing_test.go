package remote

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/inventory"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/study"
)

const existingInventory = `known_hosts: /nonexistent/known_hosts
hosts:
  - name: app
    role: client
    address: 198.18.20.1
    nic: eth1
    user: root
  - name: db
    role: server
    port: 2222
    server:
      dsn: "bench@tcp(198.18.21.2:3307)/wl"
      password_env: WL_PW
`

const existingPassword = "ext#pw1"

func existingOptions(t *testing.T, out *bytes.Buffer) Options {
	t.Helper()
	o := dryOptions(t, out)
	inv, err := inventory.Parse([]byte(existingInventory), "/root")
	if err != nil {
		t.Fatal(err)
	}
	inv.Path = "hosts.yaml"
	o.Inventory = inv
	return o
}

func existingBandwidth() *study.Bandwidth {
	x := engine.UncheckedExternal(engine.ExternalConfig{DSN: engine.DSN{User: "bench", Host: "198.18.21.2", Port: 3307, DB: "wl"},
		Password: existingPassword}, "")
	return study.NewBandwidth(study.BandwidthOptions{
		Bench: study.Bench{Threads: []int{1}, Duration: time.Second, Tables: 2, TableSize: 10, Repeat: 1,
			Workload: "oltp_read_only", RandType: "pareto", Existing: x},
		Slow: link.Condition{RateBps: 20_000_000}, Fast: link.Condition{}, Experiments: []string{"n1"}})
}

// An existing server (server.dsn) is measured from the client alone: its host is never
// contacted, the data set is prepared and the load run by the client's sysbench at the
// DSN's address, the one the NIC is shaped toward, with the password in a private file
// (never on a command line), and only the client runs a sample agent.
func TestDryRunOfAnExistingServer(t *testing.T) {
	var out bytes.Buffer
	if err := DryRun(context.Background(), existingOptions(t, &out), existingBandwidth()); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	assertPrints(t, text,
		"app: mktemp -d /tmp/wirelab-XXXXXX",
		"match ip dst 198.18.21.2/32 match ip protocol 6 0xff match ip dport 22 0xffff flowid 1:",
		"# existing server bench@tcp(198.18.21.2:3307)/wl: wirelab logs in to it from this machine",
		"app: copy 72 bytes to /tmp/wirelab-XXXXXX/existing-tables.json", // {"dsn":...,"tables":["sbtest1","sbtest2"]}
		"app: copy 23 bytes to /tmp/wirelab-XXXXXX/private-",             // "mysql-password=ext#pw1\n"
		"--mysql-host=198.18.21.2 --mysql-port=3307 --mysql-user=bench --config-file=/tmp/wirelab-XXXXXX/private-",
		"agent sample --every 1s --for 6h --up-class eth1:1:1",
	)
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "db:") {
			t.Errorf("the existing server's host was contacted: %s", line)
		}
	}
	if strings.Contains(text, existingPassword) || strings.Contains(text, "--mysql-password") {
		t.Errorf("the password is on a command line:\n%s", text)
	}
	if strings.Contains(text, "dport 2222") || strings.Contains(text, "agent mariadb") {
		t.Errorf("the server host's SSH port or a server start in the plan of an existing server:\n%s", text)
	}
	if n := strings.Count(text, "sysbench oltp_read_only --db-driver=mysql"); n < 2 {
		t.Errorf("%d sysbench commands, want the prepare and the point's run on the client:\n%s", n, text)
	}
}

// An existing server's machine is not wirelab's: the backend has no directory there (Dir
// ""), so nothing is looked for on it (a run's kept logs), while the client has its own.
func TestExistingServerHasNoDir(t *testing.T) {
	var out bytes.Buffer
	b, err := Open(context.Background(), existingOptions(t, &out), existingBandwidth().Needs())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Down(context.Background())
	if d := b.Dir(lab.Server); d != "" {
		t.Errorf("Dir(server) = %q for an existing server, want none", d)
	}
	if d := b.Dir(lab.Client); d == "" {
		t.Error("Dir(client) is empty")
	}
}

// An existing server is MySQL/MariaDB on a port the shaping does not leave out, given to
// the study as a login; a study that runs on the server's host cannot measure one.
func TestExistingServerRefusals(t *testing.T) {
	var out bytes.Buffer
	o := existingOptions(t, &out)
	if err := CheckServer(o.Inventory, engine.Postgres); err == nil || !strings.Contains(err.Error(), "host db: server.dsn names an existing MySQL/MariaDB server") {
		t.Errorf("--engine postgres: %v", err)
	}
	if err := CheckServer(o.Inventory, ""); err != nil {
		t.Errorf("mariadb: %v", err)
	}
	inv22, err := inventory.Parse([]byte(strings.Replace(existingInventory, ":3307)", ":22)", 1)), "/root")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckServer(inv22, ""); err == nil || !strings.Contains(err.Error(), "port 22 is a client's SSH port") {
		t.Errorf("dsn on the SSH port: %v", err)
	}
	needs := existingBandwidth().Needs()
	needs.Servers[0].Loopback = true
	if _, err := Open(context.Background(), o, needs); err == nil || !strings.Contains(err.Error(), "host db is an existing server (server.dsn)") {
		t.Errorf("a study on the server's host: %v", err)
	}
	needs = existingBandwidth().Needs()
	needs.Tunnel = true
	if _, err := Open(context.Background(), o, needs); err == nil || !strings.Contains(err.Error(), "where the tunnel's exit would run; drop --channel tunnel") {
		t.Errorf("the tunnel with an existing server: %v", err)
	}
	needs = existingBandwidth().Needs()
	needs.Servers[0].Existing = nil
	if _, err := Open(context.Background(), o, needs); err == nil || !strings.Contains(err.Error(), "no login to it") {
		t.Errorf("no login: %v", err)
	}
	if _, err := Open(context.Background(), dryOptions(t, &out), existingBandwidth().Needs()); err == nil || !strings.Contains(err.Error(), "--hosts and --server-dsn: pick one") {
		t.Errorf("a login to another server than the inventory's: %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("refused studies touched a host:\n%s", out.String())
	}
}

// `down --hosts` drops the tables a run recorded on the inventory's existing server and
// did not drop, and leaves a record of another server's tables alone, naming them.
func TestDownDropsRecordedTables(t *testing.T) {
	var out bytes.Buffer
	o := existingOptions(t, &out)
	var dropped []string
	o.DropExisting = func(_ context.Context, tables []string) error {
		dropped = append(dropped, tables...)
		return nil
	}
	f := newFakeHost()
	h := &host{inv: o.Inventory.Role(inventory.Client)[0], h: f}
	const cat = `sh -c cat -- "$1/existing-tables.json" 2>/dev/null; exit 0 sh /tmp/wirelab-abc`
	if err := leftTables(context.Background(), o, h, "/tmp/wirelab-abc"); err != nil || dropped != nil {
		t.Errorf("no record: %v, dropped %v", err, dropped)
	}
	f.answers[cat] = `{"dsn":"bench@tcp(198.18.21.2:3307)/wl","tables":["sbtest1","sbtest2"]}`
	if err := leftTables(context.Background(), o, h, "/tmp/wirelab-abc"); err != nil || strings.Join(dropped, ",") != "sbtest1,sbtest2" {
		t.Errorf("a record of this server: %v, dropped %v", err, dropped)
	}
	dropped = nil
	f.answers[cat] = `{"dsn":"bench@tcp(198.18.21.9:3307)/wl","tables":["sbtest1"]}`
	err := leftTables(context.Background(), o, h, "/tmp/wirelab-abc")
	if err == nil || !strings.Contains(err.Error(), "left tables sbtest1 on bench@tcp(198.18.21.9:3307)/wl") || dropped != nil {
		t.Errorf("a record of another server: %v, dropped %v", err, dropped)
	}
}
