package cli

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/cpuidle"
	"github.com/wirelab/wirelab/internal/execx"
)

// testProcess is an in-memory process: no signals, a fake runner that fails the test if a
// command runs, root or not as asked.
func testProcess(t *testing.T, root bool) (*Process, *bytes.Buffer, *bytes.Buffer, *execx.Fake) {
	t.Helper()
	var out, errb bytes.Buffer
	f := &execx.Fake{}
	return &Process{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" },
		Runner: f, Logger: slog.New(slog.DiscardHandler), StateDir: t.TempDir(), Self: "/nonexistent/wirelab",
		IsRoot: func() bool { return root }}, &out, &errb, f
}

func TestBadInputFailsBeforeAnythingIsCreated(t *testing.T) {
	unwritable := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(unwritable, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	pwFile, blankPw := filepath.Join(t.TempDir(), "pw"), filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blankPw, []byte("s3 cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const dsn = "bench@tcp(198.18.250.1:3306)/wl"
	hostsFile := filepath.Join(t.TempDir(), "hosts.yaml")
	if err := os.WriteFile(hostsFile, []byte("hosts:\n  - {name: app, role: client, address: 198.18.20.1, nic: eth1, user: root}\n"+
		"  - {name: db, role: server, address: 198.18.20.2, user: root, server: {start: mariadb}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pgHosts := filepath.Join(t.TempDir(), "pg.yaml")
	if err := os.WriteFile(pgHosts, []byte("hosts:\n  - {name: app, role: client, address: 198.18.20.1, nic: eth1, user: root}\n"+
		"  - {name: db, role: server, address: 198.18.20.2, user: root, server: {start: postgres}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// An existing server: its host needs no user, its address is the DSN's.
	dsnHosts := filepath.Join(t.TempDir(), "dsn.yaml")
	if err := os.WriteFile(dsnHosts, []byte("hosts:\n  - {name: app, role: client, address: 198.18.20.1, nic: eth1, user: root}\n"+
		"  - {name: db, role: server, server: {dsn: \"bench@tcp(198.18.20.2:3306)/wl\", password_file: "+pwFile+"}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dsnEnvHosts, dsnBlankHosts := filepath.Join(t.TempDir(), "dsn-env.yaml"), filepath.Join(t.TempDir(), "dsn-blank.yaml")
	b, _ := os.ReadFile(dsnHosts)
	if err := os.WriteFile(dsnEnvHosts, []byte(strings.Replace(string(b), "password_file: "+pwFile, "password_env: WL_T_PW", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dsnBlankHosts, []byte(strings.Replace(string(b), pwFile, blankPw, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	ext := func(args ...string) []string {
		return append([]string{"run", "--server-dsn", dsn, "--server-password-file", pwFile}, args...)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--server-dsn", "bench:s3cret@tcp(198.18.250.1:3306)/wl"}, "carries a password; remove it and export WIRELAB_SERVER_PASSWORD or give --server-password-file"},
		{[]string{"run", "--server-dsn", "bench@unix(/run/mysqld/mysqld.sock)/wl"}, "--server-dsn: dsn"},
		{[]string{"run", "--server-dsn", "bench@tcp(198.18.250.1:3306)/"}, "names no database"},
		{[]string{"run", "--server-dsn", "bench@tcp(198.18.250.1:3306)/wl?tls=true"}, "drop the ?... part"},
		{[]string{"run", "--server-dsn", "bench@tcp(127.0.0.1:3306)/wl"}, "loopback"},
		{[]string{"run", "--server-dsn", "bench@tcp(198.18.0.2:3306)/wl"}, "the lab's own addresses"},
		{[]string{"run", "--server-dsn", "bench@tcp([2001:db8::1]:3306)/wl"}, "not IPv4"},
		{[]string{"run", "--server-dsn", dsn}, "no password: export WIRELAB_SERVER_PASSWORD or give --server-password-file"},
		{[]string{"run", "--server-dsn", dsn, "--server-password-file", "/nonexistent/pw"}, "--server-password-file:"},
		{[]string{"run", "--server-dsn", dsn, "--server-password-file", blankPw}, "blank"},
		{[]string{"run", "--server-password-file", pwFile}, "--server-password-file applies only with --server-dsn"},
		{ext("--engine", "postgres"), "drop --engine postgres"},
		{ext("--buffer-pool", "2G"), "--buffer-pool"},
		{ext("--tls"), "--tls with --server-dsn needs --server-tls-dir"},
		{ext("--tls", "--server-tls-dir", t.TempDir()), "--server-tls-dir"},
		{ext("--server-tls-dir", t.TempDir()), "--server-tls-dir applies only"},
		{[]string{"study", "bandwidth", "--server-dsn", dsn, "--server-password-file", pwFile}, "--server-tls-dir"}, // n3 is TLS
		{[]string{"study", "transport", "--server-dsn", dsn}, "study transport: --server-dsn does not apply"},
		{[]string{"study", "replication", "--server-dsn", dsn}, "flag provided but not defined: -server-dsn"},
		{[]string{"run", "--rate", "20furlongs"}, "--rate"},
		{[]string{"run", "--rate", "0mbit"}, "--rate"},
		{[]string{"run", "--rate", "-5mbit"}, "--rate"},
		{[]string{"run", "--threads", "0,8"}, "1..4096"},
		{[]string{"run", "--threads", "8,8"}, "appears twice"},
		{[]string{"run", "--threads", "5000"}, "1..4096"},
		{[]string{"run", "--threads", ""}, "--threads is empty"},
		{[]string{"run", "--duration", "500ms"}, "--duration"},
		{[]string{"run", "--workload", "oltp_nope"}, "--workload"},
		{[]string{"run", "--out", filepath.Join(unwritable, "sub")}, "--out"},
		{[]string{"study", "nosuch"}, "unknown study"},
		{[]string{"study", "bandwidth", "--slow", "1gbit", "--fast", "100mbit"}, "--slow"},
		{[]string{"study", "bandwidth", "--slow", "unlimited"}, "--slow"},
		{[]string{"study", "bandwidth", "--threads", "1,1"}, "appears twice"},
		{[]string{"study", "bandwidth", "--experiments", "n4"}, "--experiments"},
		{[]string{"study", "bandwidth", "--rate", "10mbit"}, "--slow and --fast"},
		{[]string{"study", "transport", "--paths", "socket,pigeon"}, "--paths"},
		{[]string{"run", "--engine", "oracle"}, "--engine"},
		{[]string{"run", "--engine", "postgres", "--compression"}, "--compression: PostgreSQL has no protocol compression"},
		{[]string{"up", "--engine", "mysql8"}, "--engine"},
		{[]string{"run", "--driver", "k6"}, `--driver "k6": want sysbench or pgbench`},
		{[]string{"run", "--driver", "pgbench"}, "--driver pgbench: pgbench drives PostgreSQL only; add --engine postgres"},
		{[]string{"run", "--engine", "mariadb", "--driver", "pgbench", "--workload", "select-only"}, "--driver pgbench: pgbench drives PostgreSQL only"},
		{[]string{"run", "--engine", "postgres", "--driver", "pgbench", "--workload", "oltp_read_only"},
			`--workload "oltp_read_only": with --driver pgbench want one of tpcb-like, select-only, simple-update`},
		{[]string{"run", "--engine", "postgres", "--workload", "select-only"},
			`--workload "select-only": with --driver sysbench want one of`},
		{[]string{"run", "--engine", "postgres", "--driver", "pgbench", "--tables", "8"}, "--tables is sysbench's; with --driver pgbench the data set is --scale"},
		{[]string{"run", "--engine", "postgres", "--driver", "pgbench", "--table-size", "1000"}, "--table-size is sysbench's"},
		{[]string{"run", "--engine", "postgres", "--driver", "pgbench", "--rand-type", "uniform"}, "--rand-type is sysbench's"},
		{[]string{"run", "--engine", "postgres", "--driver", "pgbench", "--scale", "0"}, "--scale 0: want 1..1000"},
		{[]string{"run", "--engine", "postgres", "--scale", "20"}, "--scale is pgbench's data set; with --driver sysbench"},
		{[]string{"run", "--engine", "postgres", "--driver", "pgbench", "--compression"}, "--compression: PostgreSQL has no protocol compression"},
		{[]string{"study", "bandwidth", "--engine", "postgres", "--driver", "pgbench"}, "--driver pgbench: study bandwidth runs sysbench only"},
		{[]string{"study", "transport", "--engine", "postgres", "--driver", "pgbench"}, "--driver pgbench: study transport runs sysbench only"},
		{[]string{"run", "--dry-run"}, "--dry-run applies only with --hosts"},
		{[]string{"study", "bandwidth", "--insecure-host-key"}, "--insecure-host-key applies only with --hosts"},
		{[]string{"run", "--hosts", "/nonexistent/hosts.yaml"}, "--hosts: "},
		{[]string{"run", "--hosts", hostsFile, "--engine", "postgres"}, "host db starts mariadb (server: {start: mariadb}), and --engine is postgres: set start: postgres there, or run with --engine mariadb"},
		{[]string{"run", "--hosts", hostsFile, "--engine", "postgres", "--driver", "pgbench"}, "--hosts: --driver pgbench runs in the namespace lab only"},
		{[]string{"study", "bandwidth", "--hosts", pgHosts}, "host db starts postgres (server: {start: postgres}), and --engine is mariadb: set start: mariadb there, or run with --engine postgres"},
		{[]string{"run", "--hosts", pgHosts, "--engine", "postgres", "--scale", "20"}, "--scale is pgbench's data set; with --driver sysbench"},
		{[]string{"run", "--hosts", hostsFile, "--server-dsn", dsn}, "--hosts: --server-dsn does not apply on real hosts"},
		{[]string{"run", "--hosts", hostsFile, "--shaper", "netem"}, "--hosts: --shaper does not apply"},
		{[]string{"run", "--hosts", hostsFile, "--deadman-ttl", "1s"}, "--deadman-ttl 1s: want 3s..1h"},
		{[]string{"study", "transport", "--hosts", hostsFile, "--shaper", "nfqueue"}, "--hosts: --shaper does not apply"},
		{[]string{"study", "transport", "--hosts", hostsFile, "--engine", "postgres"}, "host db starts mariadb (server: {start: mariadb}), and --engine is postgres"},
		{[]string{"study", "transport", "--dry-run"}, "--dry-run applies only with --hosts"},
		{[]string{"study", "sync", "--hosts", hostsFile, "--modes", "async"}, "0 with role replica"},
		{[]string{"study", "sync", "extra"}, `study sync: unexpected argument "extra"`},
		{[]string{"study", "replication", "extra"}, `study replication: unexpected argument "extra"`},
		{[]string{"study", "sync", "--quick", "--threads", "0"}, "study sync: --threads"},
		{[]string{"study", "replication", "--out", unwritable}, "--out " + unwritable},
		{[]string{"down", "--hosts", hostsFile, "--all"}, "down --hosts: --all does not apply"},
		{[]string{"run", "--hosts", dsnHosts, "--engine", "postgres"}, "host db: server.dsn names an existing MySQL/MariaDB server (user@tcp(host:port)/db) and --engine is postgres"},
		{[]string{"run", "--hosts", dsnHosts, "--tls"}, "host db: TLS to an existing server (server.dsn) is not set up over --hosts"},
		{[]string{"study", "bandwidth", "--hosts", dsnHosts}, "drop --tls (study bandwidth: --experiments n1,n2)"}, // n3 is TLS
		{[]string{"run", "--hosts", dsnHosts, "--buffer-pool", "2G"}, "host db: --buffer-pool sizes a server wirelab starts"},
		{[]string{"study", "transport", "--hosts", dsnHosts}, "study transport: the server is an existing one (server.dsn)"},
		{[]string{"run", "--hosts", dsnEnvHosts}, "host db: server.password_env: $WL_T_PW is empty or unset"},
		{[]string{"run", "--hosts", dsnBlankHosts}, "host db (password from server.password_file " + blankPw + "): the password has a blank"},
		{[]string{"run", "--tunnel-level", "3"}, "run: --tunnel-level sets up the tunnel, and --channel direct uses none"},
		{[]string{"run", "--channel", "direct", "--tunnel-mux", "off"}, "--tunnel-mux sets up the tunnel"},
		{[]string{"run", "--buffer-pool", "lots"}, `--buffer-pool "lots": want a whole number of K, M or G bytes`},
		{[]string{"run", "--buffer-pool", "1GB"}, `--buffer-pool "1GB"`},
		{[]string{"study", "bandwidth", "--buffer-pool", "1M"}, `--buffer-pool "1M"`},
		{[]string{"study", "replication", "--buffer-pool", "512"}, `--buffer-pool "512"`},
		{[]string{"study", "replication", "--channels", "native", "--tunnel-compress", "off"}, "--tunnel-compress sets up the tunnel, and --channels native has none"},
		{[]string{"up", "--buffer-pool", "huge"}, `--buffer-pool "huge"`},
		{[]string{"up", "--no-db", "--buffer-pool", "2G"}, "--no-db starts none"},
		{[]string{"nosuchcommand"}, "unknown command"},
		{[]string{"exec", "client"}, "want HOST -- COMMAND"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			p, _, errb, f := testProcess(t, true)
			code := Main(c.args, p)
			if code != 2 {
				t.Errorf("exit %d, want 2 (usage); stderr: %s", code, errb)
			}
			if !strings.Contains(errb.String(), c.want) {
				t.Errorf("stderr %q does not name %q", errb.String(), c.want)
			}
			if len(f.Calls) > 0 {
				t.Errorf("bad input ran commands: %v", f.Lines())
			}
		})
	}
}

func TestNotRootIsAClearError(t *testing.T) {
	p, _, errb, f := testProcess(t, false)
	if code := Main([]string{"run", "--out", t.TempDir()}, p); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if !strings.Contains(errb.String(), "root") || len(f.Calls) > 0 {
		t.Errorf("stderr %q, calls %v", errb.String(), f.Lines())
	}
}

func TestDownAndStatusWithNoLab(t *testing.T) {
	p, out, _, _ := testProcess(t, true)
	if code := Main([]string{"down"}, p); code != 0 {
		t.Fatalf("down with no lab: exit %d", code)
	}
	if !strings.Contains(out.String(), "no lab is up") {
		t.Errorf("down said %q", out.String())
	}
	out.Reset()
	if code := Main([]string{"status"}, p); code != 0 || !strings.Contains(out.String(), "no lab is up") {
		t.Errorf("status: exit %d, %q", code, out.String())
	}
}

func TestHelpHasAnExample(t *testing.T) {
	for _, cmd := range []string{"up", "run", "down", "exec", "status", "link", "tunnel", "report"} {
		p, out, errb, _ := testProcess(t, true)
		if code := Main([]string{cmd, "--help"}, p); code != 0 {
			t.Errorf("%s --help: exit %d", cmd, code)
		}
		if help := out.String() + errb.String(); !strings.Contains(help, "Example") {
			t.Errorf("%s --help has no example:\n%s", cmd, help)
		}
	}
}

// keepAwake holds the PM QoS request only when asked, says so for the report, and a
// device it cannot open is a warning, not a failed run.
func TestKeepAwake(t *testing.T) {
	p, _, errb, _ := testProcess(t, true)
	dir := t.TempDir()
	p.CPUIdle = cpuidle.Paths{Device: filepath.Join(dir, "cpu_dma_latency"), Sysfs: dir}
	if err := os.WriteFile(p.CPUIdle.Device, []byte{1, 2, 3, 4}, 0o600); err != nil {
		t.Fatal(err)
	}
	desc, release := keepAwake(p, false)
	release()
	if b, _ := os.ReadFile(p.CPUIdle.Device); b[0] != 1 || !strings.HasPrefix(desc, "OS default (--keep-cpus-awake=false)") {
		t.Fatalf("not asked: device % x, desc %q", b, desc)
	}
	desc, release = keepAwake(p, true)
	if lim, err := cpuidle.Limit(p.CPUIdle); err != nil || lim != 0 || !strings.HasPrefix(desc, "kept awake") {
		t.Fatalf("asked: limit %d (%v), desc %q", lim, err, desc)
	}
	release()
	p.CPUIdle.Device = filepath.Join(dir, "missing")
	desc, release = keepAwake(p, true)
	release()
	if !strings.Contains(desc, "could not keep CPUs awake") || !strings.Contains(errb.String(), "warning:") {
		t.Fatalf("missing device: desc %q, stderr %q", desc, errb.String())
	}
}

// Help lists flags as the README and examples write them, --name, with type hints and
// non-zero defaults, for every command that has flags.
func TestHelpShowsDoubleDashFlags(t *testing.T) {
	singleDash := regexp.MustCompile(`(?m)^\s+-[a-z]`)
	for _, args := range [][]string{{"up"}, {"exec"}, {"status"}, {"down"}, {"run"}, {"study", "bandwidth"},
		{"study", "transport"}, {"study", "replication"}, {"link", "set"}, {"link", "check"},
		{"tunnel", "entry"}, {"tunnel", "exit"}, {"tunnel", "certs"}, {"report"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			p, out, errb, f := testProcess(t, true)
			if code := Main(append(args, "--help"), p); code != 0 {
				t.Fatalf("exit %d; stderr: %s", code, errb)
			}
			help := out.String() + errb.String()
			if !strings.Contains(help, "Flags:\n  --") {
				t.Errorf("no --flags listed:\n%s", help)
			}
			if m := singleDash.FindString(help); m != "" {
				t.Errorf("a flag shown with one dash (%q):\n%s", m, help)
			}
			if len(f.Calls) > 0 {
				t.Errorf("--help ran commands: %v", f.Lines())
			}
		})
	}
	p, _, errb, _ := testProcess(t, true)
	if Main([]string{"doctor", "--help"}, p); strings.Contains(errb.String(), "Flags:") {
		t.Errorf("doctor has no flags but lists a Flags section:\n%s", errb)
	}
	p, _, errb, _ = testProcess(t, true)
	Main([]string{"run", "--help"}, p)
	for _, want := range []string{
		"  --rate string\n    \tbandwidth cap per direction", `(default "unlimited")`, // strings are quoted
		"  --duration duration\n", "(default 10s)", // other types are not
		"  --compression\n    \tMySQL protocol compression (sysbench --mysql-compression=on, zlib); MariaDB only\n", // false: no default shown
	} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("run --help lacks %q:\n%s", want, errb)
		}
	}
}
