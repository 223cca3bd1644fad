package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/syncrep"
)

func TestStudySyncBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--modes", "galera", "--rtts", "0,6s", "--semisync-timeout", "1m"}, "--rtts 0s,6s"},
		{[]string{"--engine", "postgres", "--modes", "galera-tuned"}, "galera-tuned is a MariaDB mode"},
		{[]string{"--modes", "pg-on"}, "pg-on is a PostgreSQL mode"},
		{[]string{"--engine", "postgres", "--modes", "semisync-after-sync"}, "semisync-after-sync is a MariaDB mode"},
		{[]string{"--modes", "turbo"}, `unknown mode "turbo"`},
		{[]string{"--rtts", "0,200ms", "--semisync-timeout", "1s"}, "--semisync-timeout 1s: want at least 10 × the largest --rtts (200ms)"},
		{[]string{"--rtts", "0,fast"}, "--rtts"},
		{[]string{"--rtt", "20ms"}, "this study sweeps --rtts"},
		{[]string{"--threads", "1,x"}, "--threads"},
		{[]string{"--workload", "tpcb-like"}, "--workload tpcb-like is a pgbench script, and pgbench drives PostgreSQL only: with --engine mariadb want one of oltp_write_only, oltp_insert"},
		{[]string{"--workload", "simple-update", "--tables", "2"}, "--workload simple-update is a pgbench script"},
		{[]string{"--engine", "postgres", "--workload", "tpcb-like", "--tables", "2"}, "--tables is sysbench's; with --workload tpcb-like the data set is pgbench's tables at --scale"},
		{[]string{"--engine", "postgres", "--workload", "simple-update", "--table-size", "500"}, "--table-size is sysbench's"},
		{[]string{"--engine", "postgres", "--workload", "tpcb-like", "--scale", "101"}, "--scale 101: want 1..100"},
		{[]string{"--engine", "postgres", "--scale", "5"}, "--scale is pgbench's data set; with --workload oltp_write_only the data set is --tables × --table-size"},
		{[]string{"--engine", "postgres", "--workload", "select-only"}, `--workload "select-only": want one of oltp_write_only, oltp_insert (sysbench) or, with --engine postgres, tpcb-like, simple-update (pgbench)`},
		{[]string{"--workload", "oltp_read_only"}, "--workload"},
		{[]string{"--duration", "1s"}, "--duration"},
		{[]string{"--target-tps", "-5"}, "--target-tps"},
		{[]string{"--rate", "2furlongs"}, "--rate"},
		{[]string{"--engine", "mysql"}, "--engine"},
		{[]string{"extra"}, "unexpected argument"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			p, _, errb, f := testProcess(t, true)
			code := Main(append([]string{"study", "sync", "--out", t.TempDir()}, c.args...), p)
			if code != 2 {
				t.Errorf("exit %d, want 2 (usage); stderr: %s", code, errb)
			}
			if !strings.Contains(errb.String(), c.want) {
				t.Errorf("stderr %q does not name %q", errb.String(), c.want)
			}
			if len(f.Calls) > 0 {
				t.Errorf("bad input ran commands: %v", f.Calls)
			}
		})
	}
}

func TestStudySyncQuickAndDefaults(t *testing.T) {
	for _, c := range []struct {
		args    []string
		engine  engine.Kind
		modes   []string
		rtts    []time.Duration
		threads []int
		data    string // the workload and its data set, as the start line names them
	}{
		{[]string{"--quick"}, engine.MariaDB, []string{"async", "semisync-after-sync", "semisync-after-commit", "galera", "galera-tuned"},
			[]time.Duration{0, 20 * time.Millisecond, 100 * time.Millisecond}, []int{1, 8}, "sysbench oltp_write_only on 4 × 10000 rows"},
		{[]string{"--engine", "postgres", "--quick", "--threads", "4"}, engine.Postgres,
			[]string{"pg-off", "pg-local", "pg-remote-write", "pg-on", "pg-remote-apply"},
			[]time.Duration{0, 20 * time.Millisecond, 100 * time.Millisecond}, []int{4}, "sysbench oltp_write_only on 4 × 10000 rows"},
		{nil, engine.MariaDB, []string{"async", "semisync-after-sync", "semisync-after-commit", "galera", "galera-tuned"},
			[]time.Duration{0, time.Millisecond, 7 * time.Millisecond, 20 * time.Millisecond, 100 * time.Millisecond}, []int{1, 8, 32, 64},
			"sysbench oltp_write_only on 4 × 10000 rows"},
		// pgbench's data set is --scale, 10 unless given, as with wirelab run --driver pgbench.
		{[]string{"--engine", "postgres", "--workload", "tpcb-like", "--quick"}, engine.Postgres,
			[]string{"pg-off", "pg-local", "pg-remote-write", "pg-on", "pg-remote-apply"},
			[]time.Duration{0, 20 * time.Millisecond, 100 * time.Millisecond}, []int{1, 8}, "pgbench tpcb-like at scale 10"},
		{[]string{"--engine", "postgres", "--workload", "simple-update", "--scale", "3", "--modes", "pg-on", "--rtts", "0,40ms", "--threads", "1"}, engine.Postgres,
			[]string{"pg-local", "pg-on"}, []time.Duration{0, 40 * time.Millisecond}, []int{1}, "pgbench simple-update at scale 3"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			fs := newFlagSet(&Process{Stderr: os.Stderr}, "x", "", "")
			f := addSyncFlags(fs)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			if err := applyQuick(fs, *f.quick, syncQuick); err != nil {
				t.Fatal(err)
			}
			o, err := f.options()
			if err != nil {
				t.Fatal(err)
			}
			if o.Engine != c.engine || !slices.Equal(syncrep.Names(o.Modes), c.modes) || !slices.Equal(o.RTTs, c.rtts) || !slices.Equal(o.Threads, c.threads) {
				t.Errorf("options: engine %s modes %v rtts %v threads %v", o.Engine, syncrep.Names(o.Modes), o.RTTs, o.Threads)
			}
			if got := o.WorkloadText(); got != c.data {
				t.Errorf("workload %q, want %q", got, c.data)
			}
			if *f.quick {
				// --quick must finish within 15 minutes even on PostgreSQL's five modes.
				if est := o.Estimate(); est > 12*time.Minute {
					t.Errorf("--quick estimate %s, want well under 15 minutes", est)
				}
			}
		})
	}
}

// syncInventory writes an inventory of a source (db) and a replica host (rep), study
// sync's and study replication's, with more hosts in extra.
func syncInventory(t *testing.T, extra string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "hosts.yaml")
	if err := os.WriteFile(f, []byte("known_hosts: /nonexistent/known_hosts\ndefaults: {user: root}\nhosts:\n"+
		"  - {name: db, role: server, address: 198.18.30.2, server: {start: mariadb}}\n"+
		"  - {name: rep, role: replica, address: 198.18.30.1, nic: eth0, server: {start: mariadb}}\n"+extra), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// With --hosts, what real hosts do not run (PostgreSQL, Galera, --modes left to its
// default, which includes Galera, the wire check) is refused by name before anything is
// contacted, and each refusal names what is accepted.
func TestStudySyncHostsRefusals(t *testing.T) {
	inv := syncInventory(t, "")
	const accepted = "a subset of async,semisync-after-sync,semisync-after-commit"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--hosts", inv}, "--hosts: --modes is required on real hosts: its default, every MariaDB mode, includes galera and galera-tuned, which run in the namespace lab only; name the modes, " + accepted},
		{[]string{"--hosts", inv, "--quick"}, "--modes is required on real hosts"},
		{[]string{"--hosts", inv, "--modes", "async,galera"}, "--hosts: --modes galera: Galera runs in the namespace lab only (a two-node cluster needs two more agents and a cluster bootstrap on the hosts, which are not built); on real hosts --modes takes " + accepted},
		{[]string{"--hosts", inv, "--modes", "galera,galera-tuned"}, "--modes galera,galera-tuned: Galera runs in the namespace lab only"},
		{[]string{"--hosts", inv, "--engine", "postgres"}, "--hosts: study sync --engine postgres runs in the namespace lab only (the standby is a base backup of the primary taken on the replica host"},
		{[]string{"--hosts", inv, "--engine", "postgres", "--modes", "pg-on"}, "study sync --engine postgres runs in the namespace lab only"},
		{[]string{"--hosts", inv, "--modes", "async", "--check-wire"}, "--hosts: --check-wire"},
		{[]string{"--hosts", inv, "--modes", "async", "--shaper", "netem"}, "--hosts: --shaper does not apply"},
		{[]string{"--hosts", syncInventory(t, "  - {name: rep2, role: replica, address: 198.18.30.3, nic: eth0, server: {start: mariadb}}\n"), "--modes", "async"}, "role replica"},
		{[]string{"--dry-run"}, "--dry-run applies only with --hosts"},
		{[]string{"--deadman-ttl", "10s"}, "--deadman-ttl applies only with --hosts"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			assertUsage(t, append([]string{"study", "sync", "--out", t.TempDir()}, c.args...), c.want)
		})
	}
}

// `study sync --hosts --dry-run` with the modes named prints the plan of the modes asked
// for, the load on the server host, and runs nothing on this machine.
func TestStudySyncHostsDryRun(t *testing.T) {
	inv := syncInventory(t, "")
	p, out, errb, f := testProcess(t, true)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p.Self = self
	code := Main([]string{"study", "sync", "--hosts", inv, "--dry-run", "--modes", "semisync-after-sync", "--rtts", "0,20ms",
		"--threads", "1", "--duration", "3s", "--tables", "1", "--table-size", "100", "--out", filepath.Join(t.TempDir(), "out")}, p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	text := out.String()
	for _, want := range []string{"rep: tc qdisc", "AFTER_SYNC", "rpl_semi_sync_master_enabled = OFF",
		"db: stream: sysbench oltp_write_only --db-driver=mysql --mysql-socket=", "rep: rm -rf -- /tmp/wirelab-XXXXXX"} {
		if !strings.Contains(text, want) {
			t.Errorf("plan lacks %q:\n%s", want, text)
		}
	}
	// async is added as the control: two modes at two RTTs.
	if n := strings.Count(text, "stream: sysbench oltp_write_only --db-driver=mysql") - 2; n != 4 {
		t.Errorf("%d sysbench runs, want 4 (async and semisync-after-sync at 0 and 20ms):\n%s", n, text)
	}
	if strings.Contains(text, "AFTER_COMMIT") {
		t.Errorf("a mode not asked for is in the plan:\n%s", text)
	}
	if len(f.Calls) > 0 {
		t.Errorf("a dry run ran commands here: %v", f.Lines())
	}
}
