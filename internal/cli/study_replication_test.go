package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/replication"
)

func TestStudyReplicationBadInput(t *testing.T) {
	unwritable := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(unwritable, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--channels", "native,carrier-pigeon"}, "--channels"},
		{[]string{"--channels", "tunnel,tunnel"}, "appears twice"},
		{[]string{"--channels", ""}, "--channels is empty"},
		{[]string{"--scenarios", "1,5"}, "--scenarios"},
		{[]string{"--scenarios", "2,2"}, "appears twice"},
		{[]string{"--rate-cap", "2furlongs"}, "--rate"},
		{[]string{"--rate", "2furlongs"}, "--rate"},
		{[]string{"--precision", "0"}, "--precision"},
		{[]string{"--precision", "lots"}, "--precision"},
		{[]string{"--delay", "125ms", "--rtt", "250ms"}, "--delay and --rtt"},
		{[]string{"--rtt", "-1s"}, "--rtt"},
		{[]string{"--rtts", "0,fast"}, "--rtts"},
		{[]string{"--loads", "300,lots"}, "--loads"},
		{[]string{"--qps", "0"}, "--qps"},
		{[]string{"--duration", "2s"}, "--duration"},
		{[]string{"--search-factor", "1"}, "--search-factor"},
		{[]string{"--tables", "0"}, "--tables"},
		{[]string{"--tunnel-compress", "gzip"}, "--tunnel-compress"},
		{[]string{"--shaper", "magic"}, "--shaper"},
		{[]string{"--fault-for", "1m"}, "--fault-at"},
		{[]string{"--out", filepath.Join(unwritable, "sub")}, "--out"},
		{[]string{"extra"}, "unexpected argument"},
		{[]string{"--engine", "mysql"}, "--engine"},
		{[]string{"--engine", "postgres", "--channels", "native-compressed"}, "--channels"},
		{[]string{"--engine", "postgres", "--channels", "native,native-compressed,tunnel"}, "no compression"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			assertUsage(t, append([]string{"study", "replication"}, c.args...), c.want)
		})
	}
}

// assertUsage runs wirelab with args and wants a usage error naming want, with no
// command run.
func assertUsage(t *testing.T, args []string, want string) {
	t.Helper()
	p, _, errb, f := testProcess(t, true)
	if code := Main(args, p); code != 2 {
		t.Errorf("exit %d, want 2 (usage); stderr: %s", code, errb)
	}
	if !strings.Contains(errb.String(), want) {
		t.Errorf("stderr %q does not name %q", errb.String(), want)
	}
	if len(f.Calls) > 0 {
		t.Errorf("bad input ran commands: %v", f.Calls)
	}
}

func TestStudyReplicationQuickDefaults(t *testing.T) {
	fs := newFlagSet(&Process{Stderr: os.Stderr}, "x", "", "")
	f := addReplicationFlags(fs)
	if err := fs.Parse([]string{"--out", t.TempDir(), "--rtt", "100ms"}); err != nil {
		t.Fatal(err)
	}
	o, err := f.options()
	if err != nil {
		t.Fatal(err)
	}
	if o.Link.Delay != 50*time.Millisecond || o.Link.RateBps != 2_000_000 || len(o.Channels) != 3 || len(o.RTTs) != 5 ||
		o.RTTs[0] != 0 || o.Precision != 0.05 || o.Tunnel.Compress != "zstd" {
		t.Fatalf("options %+v", o)
	}
	// --quick fills what was not given and leaves what was.
	fs = newFlagSet(&Process{Stderr: os.Stderr}, "x", "", "")
	f = addReplicationFlags(fs)
	if err := fs.Parse([]string{"--quick", "--duration", "30s", "--rate-cap", "1mbit"}); err != nil {
		t.Fatal(err)
	}
	if err := applyQuick(fs, *f.quick, replicationQuick); err != nil {
		t.Fatal(err)
	}
	if o, err = f.options(); err != nil {
		t.Fatal(err)
	}
	if o.Duration != 30*time.Second || o.SearchDuration != 20*time.Second || len(o.RTTs) != 3 || o.CheckWire ||
		o.Link.RateBps != 1_000_000 || o.Link.Delay != 125*time.Millisecond {
		t.Fatalf("quick options %+v", o)
	}
}

func TestStudyReplicationEngineChannels(t *testing.T) {
	cases := []struct {
		args []string
		kind engine.Kind
		want []replication.Channel
	}{
		{nil, engine.MariaDB, []replication.Channel{replication.Native, replication.NativeCompressed, replication.Tunnel}},
		{[]string{"--engine", "postgres"}, engine.Postgres, []replication.Channel{replication.Native, replication.Tunnel}},
		{[]string{"--engine", "postgres", "--channels", "tunnel"}, engine.Postgres, []replication.Channel{replication.Tunnel}},
		{[]string{"--engine", "mariadb", "--channels", "native-compressed"}, engine.MariaDB, []replication.Channel{replication.NativeCompressed}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			fs := newFlagSet(&Process{Stderr: os.Stderr}, "x", "", "")
			f := addReplicationFlags(fs)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			o, err := f.options()
			if err != nil {
				t.Fatal(err)
			}
			if o.Engine != c.kind || !slices.Equal(o.Channels, c.want) {
				t.Errorf("engine %s channels %v; want %s %v", o.Engine, o.Channels, c.kind, c.want)
			}
		})
	}
}

// With --hosts, what the study does not do on real hosts, and an inventory without what
// it needs of the replica, are refused by name before anything is contacted.
func TestStudyReplicationHostsRefusals(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		t.Helper()
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte("defaults: {user: root}\nhosts:\n"+body), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	const server = "  - {name: db, role: server, address: 198.18.30.2, server: {start: mariadb}}\n"
	good := write("good.yaml", server+"  - {name: rep, role: replica, address: 198.18.30.1, nic: eth0, server: {start: mariadb}}\n")
	noNIC := write("nonic.yaml", server+"  - {name: rep, role: replica, address: 198.18.30.1, server: {start: mariadb}}\n")
	noReplica := write("norep.yaml", server+"  - {name: app, role: client, address: 198.18.30.1, nic: eth0}\n")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--hosts", good, "--engine", "postgres", "--channels", "native,tunnel"}, "--hosts: study replication --engine postgres runs in the namespace lab only"},
		{[]string{"--hosts", good, "--check-wire"}, "--hosts: --check-wire"},
		{[]string{"--hosts", good, "--shaper", "netem"}, "--hosts: --shaper does not apply"},
		{[]string{"--hosts", noNIC}, "hosts[1] (rep): nic: missing"},
		{[]string{"--hosts", noReplica}, "0 with role replica"},
		{[]string{"--dry-run"}, "--dry-run applies only with --hosts"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			assertUsage(t, append([]string{"study", "replication", "--out", t.TempDir()}, c.args...), c.want)
		})
	}
}

// An inventory made for study replication (a replica, no client) is refused by the
// studies that load a server from a client, before anything is contacted.
func TestRunHostsWantsAClient(t *testing.T) {
	f := filepath.Join(t.TempDir(), "hosts.yaml")
	if err := os.WriteFile(f, []byte("defaults: {user: root}\nhosts:\n"+
		"  - {name: db, role: server, address: 198.18.30.2, server: {start: mariadb}}\n"+
		"  - {name: rep, role: replica, address: 198.18.30.1, nic: eth0, server: {start: mariadb}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	assertUsage(t, []string{"run", "--hosts", f, "--out", t.TempDir()}, "0 with role client")
}

// goals.json quotes the command as typed, without the directory it sits in.
func TestCommandLine(t *testing.T) {
	got := commandLine("wirelab study replication", []string{"--quick", "--out", "/tmp/x/out", "--channels", "native,tunnel", "--out=/y", "--scenarios", "2 3"})
	if want := `wirelab study replication --quick --channels native,tunnel --scenarios "2 3"`; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
