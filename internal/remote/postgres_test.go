package remote

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/inventory"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/postgres"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
)

// postgresOptions are dryOptions with an inventory whose server starts PostgreSQL.
func postgresOptions(t *testing.T, out *bytes.Buffer) Options {
	t.Helper()
	o := dryOptions(t, out)
	inv, err := inventory.Parse([]byte(strings.Replace(testInventory, "start: mariadb", "start: postgres", 1)), "/root")
	if err != nil {
		t.Fatal(err)
	}
	inv.Path = "hosts.yaml"
	o.Inventory = inv
	return o
}

// The dry run of a PostgreSQL study prints its whole plan and contacts nobody: the
// pre-checks of the client's sysbench pgsql driver and of the server's binaries, OS user
// and sysbench, all before anything is copied; the agent on its private port; the CA
// copied to the client; the data set prepared over the server's socket directory; every
// point's sample agents (the postmaster watched by name, its pid not known before it
// runs) and sysbench on the client across the wire to the private port; the teardown.
func TestDryRunPostgres(t *testing.T) {
	var out bytes.Buffer
	if err := DryRun(context.Background(), postgresOptions(t, &out), bandwidth(engine.Postgres)); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	assertPrints(t, text,
		`app: sh -c 'sysbench --help 2>/dev/null | grep -q '\''^ *pgsql '\'''`,
		`db: sh -c 'for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ]`,
		"db: sh -c 'id -u postgres'",
		"db: sh -c 'command -v setpriv || [ -x /usr/sbin/setpriv ]'",
		`db: sh -c 'sysbench --help 2>/dev/null | grep -q '\''^ *pgsql '\'''`,
		"db: chmod 0711 /tmp/wirelab-XXXXXX",
		"db: start postgres-agent: setsid -f /tmp/wirelab-XXXXXX/wirelab agent postgres --dir /tmp/wirelab-XXXXXX/postgres --bind 198.18.21.2 --port 15432 --for 4h0m0s >>/tmp/wirelab-XXXXXX/postgres/postgres-agent.log",
		"db: cat -- /tmp/wirelab-XXXXXX/postgres/certs/ca.pem",
		"app: copy 0 bytes to /tmp/wirelab-XXXXXX/certs/ca.pem (mode 600)",
		"db: stream: PGSSLMODE=disable sysbench oltp_read_only --db-driver=pgsql --pgsql-host=/tmp/wirelab-XXXXXX/postgres/run --pgsql-port=15432 ",
		"db: stream: /tmp/wirelab-XXXXXX/wirelab agent sample --every 1s --for 6h --comm postgres",
		"app: stream: PGSSLMODE=disable sysbench oltp_read_only --db-driver=pgsql --pgsql-host=198.18.21.2 --pgsql-port=15432 ",
		"db: stop postgres-agent",
		"db: rm -rf -- /tmp/wirelab-XXXXXX",
		"app: tc qdisc del dev eth1 root")
	if strings.Contains(text, "mariadb") {
		t.Errorf("a PostgreSQL plan names MariaDB:\n%s", text)
	}
	i, j := strings.Index(text, "id -u postgres"), strings.Index(text, "copy ")
	if i < 0 || j < 0 || i > j {
		t.Errorf("the server's pre-checks must come before anything is copied:\n%s", text)
	}
	if i, j := strings.Index(text, "stop postgres-agent"), strings.Index(text, "db: rm -rf"); i < 0 || j < 0 || i > j {
		t.Errorf("the server must be stopped before its directory is removed:\n%s", text)
	}
}

// A pre-check that fails names the host, what is missing and the package to install.
func TestPreChecksNameThePackage(t *testing.T) {
	spec := postgresEngine{}.Spec()
	for _, c := range []struct {
		fail, want string
	}{
		{postgresBins, "host db1: PostgreSQL's initdb, postgres and psql (/usr/lib/postgresql/*/bin) is not installed (the server runs it): install it (Debian: apt-get install postgresql-15)"},
		{"id -u postgres", "the OS user postgres, who runs the server is not installed"},
		{"sysbench --help", "sysbench with its pgsql driver is not installed (the server runs it): install it (Debian: apt-get install sysbench)"},
	} {
		f := newFakeHost()
		f.fails = []string{"sh -c " + c.fail}
		err := check(context.Background(), f, "the server runs it", spec.ServerNeeds)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q failing: %v, want %q", c.fail, err, c.want)
		}
	}
	f := newFakeHost()
	if err := check(context.Background(), f, "the server runs it", spec.ServerNeeds); err != nil {
		t.Errorf("a host with everything: %v", err)
	}
	if n := len(f.lines()); n != len(spec.ServerNeeds) {
		t.Errorf("%d checks ran, want %d: %q", n, len(spec.ServerNeeds), f.lines())
	}
}

const pgDir = "/tmp/wirelab-ab12/postgres"

var pgState = ServerState{Socket: pgDir + "/run", Host: "198.51.100.7", Port: PostgresPort, User: "sbtest", Password: "pw",
	DB: "sbtest", Pid: 7001, Version: "PostgreSQL 15.18 (Debian 15.18-0+deb12u1)", CertDir: pgDir + "/certs",
	Settings: []result.Setting{{Name: "ssl", Value: "on"}, {Name: "max_connections", Value: "2100"}}}

func pgOptions() ServerOptions {
	return ServerOptions{Engine: engine.Postgres, Agent: "/tmp/wirelab-ab12/wirelab", Dir: pgDir, Bind: "198.51.100.7",
		BufferPool: "256M", StartTimeout: 3 * time.Second, StopTimeout: 500 * time.Millisecond}
}

// pgAgentReports plays `wirelab agent postgres`: it writes st after a moment, with the
// postmaster running.
func pgAgentReports(st ServerState) func(*fakeHost, int) {
	return func(f *fakeHost, pid int) {
		f.serverPid = st.Pid
		go func() {
			time.Sleep(2 * pollEvery)
			f.set("/proc/7001/stat", procStat(st.Pid, "postgres"))
			f.set(pgDir+"/"+StateFile, mustJSON(st))
		}()
	}
}

func TestStartPostgres(t *testing.T) {
	f := newFakeHost()
	f.onStart = pgAgentReports(pgState)
	ctx := context.Background()
	s, err := Start(ctx, f, pgOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := "start postgres-agent: /tmp/wirelab-ab12/wirelab agent postgres --dir " + pgDir +
		" --bind 198.51.100.7 --port 15432 --for 4h0m0s --buffer-pool 256M >> " + pgDir + "/postgres-agent.log"
	if !slices.Contains(f.lines(), want) {
		t.Errorf("agent not started as %q:\n%s", want, strings.Join(f.lines(), "\n"))
	}
	if c := s.Conn(); c != (engine.Conn{Engine: engine.Postgres, Host: "198.51.100.7", Port: 15432, Socket: pgDir + "/run",
		User: "sbtest", Password: "pw", DB: "sbtest", CertDir: pgDir + "/certs"}) {
		t.Errorf("Conn %+v", c)
	}
	if c := s.Conn(); c.SocketFile() != pgDir+"/run/.s.PGSQL.15432" {
		t.Errorf("socket file %q: sysbench's pgsql-host is the directory, the port names the file", c.SocketFile())
	}
	if s.Kind() != engine.Postgres || s.Pid() != 7001 || s.Version() != pgState.Version {
		t.Errorf("kind %s pid %d version %q", s.Kind(), s.Pid(), s.Version())
	}
	n := len(f.lines())
	facts, err := s.Facts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if facts.Engine != "postgres" || facts.Version != pgState.Version || !slices.Equal(facts.Settings, pgState.Settings) {
		t.Errorf("facts %+v", facts)
	}
	if len(f.lines()) != n {
		t.Errorf("the facts come from the agent's state, not from new commands: %q", f.lines()[n:])
	}
	// A postmaster still there once the agent is stopped and StopTimeout has passed is
	// killed with its children (its backends).
	f.stopKeepsServer = true
	err = s.Stop(ctx)
	if err == nil || !strings.Contains(err.Error(), "stop postgres (pid 7001): still running") || !slices.Contains(f.killedPids(), "7001") {
		t.Errorf("Stop: %v\n%s", err, strings.Join(f.lines(), "\n"))
	}
}

// The postmaster's pid is stopped only while it still names a postgres: a pid the kernel
// gave to another program since is not killed.
func TestStopPostgresSparesARecycledPid(t *testing.T) {
	f := newFakeHost()
	f.onStart = pgAgentReports(pgState)
	s, err := Start(context.Background(), f, pgOptions())
	if err != nil {
		t.Fatal(err)
	}
	f.stopKeepsServer = true
	f.set("/proc/7001/stat", procStat(7001, "mariadbd"))
	if err := s.Stop(context.Background()); err != nil || len(f.killedPids()) != 0 {
		t.Errorf("Stop: %v, killed %q", err, f.killedPids())
	}
}

func TestPostgresFactsNeedTheAgentsSettings(t *testing.T) {
	st := pgState
	st.Settings = nil
	if _, err := (postgresEngine{}).Facts(context.Background(), newFakeHost(), st); err == nil || !strings.Contains(err.Error(), "host db1") {
		t.Errorf("facts without settings: %v", err)
	}
}

// The server's CPU: the postmaster with its children, mariadbd alone, by name before the
// pid is known.
func TestServerWatch(t *testing.T) {
	for _, c := range []struct {
		spec EngineSpec
		pid  int
		want []string
	}{
		{postgresEngine{}.Spec(), 7001, []string{"--tree", "7001"}},
		{mariadbEngine{}.Spec(), 7001, []string{"--pid", "7001"}},
		{postgresEngine{}.Spec(), 0, []string{"--comm", "postgres"}},
	} {
		if got := sampleCommand(serverWatch(c.spec, c.pid)).Argv("wirelab")[7:]; !slices.Equal(got, c.want) {
			t.Errorf("%s pid %d: %q, want %q", c.spec.Kind, c.pid, got, c.want)
		}
	}
}

func TestEngineOf(t *testing.T) {
	if e, err := engineOf(""); err != nil || e.Spec().Kind != engine.MariaDB {
		t.Errorf("default engine: %v, %v", e, err)
	}
	if _, err := engineOf("oracle"); err == nil || !strings.Contains(err.Error(), "mariadb or postgres") {
		t.Errorf("unknown engine: %v", err)
	}
	if Port(engine.Postgres) != 15432 || Port(engine.MariaDB) != 3306 || Port("oracle") != 0 {
		t.Errorf("ports %d %d %d", Port(engine.Postgres), Port(engine.MariaDB), Port("oracle"))
	}
}

// The transport study on a server host's PostgreSQL: every row's sysbench dials the
// server's own port (15432, not the lab's 5432): the socket rows over its socket
// directory on the server host, local-tcp at 127.0.0.1, the remote rows from the client
// at the data address or through the socat hops, whose ends are .s.PGSQL.15432 files.
func TestDryRunPostgresTransport(t *testing.T) {
	var out bytes.Buffer
	st := study.NewTransport(study.TransportOptions{Paths: study.TransportPaths, Link: link.Condition{Delay: 100 * time.Microsecond},
		Bench: study.Bench{Threads: []int{1}, Duration: 3 * time.Second, Tables: 1, TableSize: 10, Repeat: 1,
			Workload: "oltp_read_only", RandType: "pareto", Engine: engine.Postgres}})
	if err := DryRun(context.Background(), postgresOptions(t, &out), st); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	const dir = "/tmp/wirelab-XXXXXX"
	var runs []string
	for _, l := range strings.Split(text, "\n") {
		host, cmd, ok := strings.Cut(l, ": stream: PGSSLMODE=disable ")
		if !ok || !strings.HasPrefix(cmd, "sysbench ") || !strings.HasSuffix(cmd, " run") {
			continue
		}
		var where []string
		for _, f := range strings.Fields(cmd) {
			if strings.HasPrefix(f, "--pgsql-host=") || strings.HasPrefix(f, "--pgsql-port=") {
				where = append(where, f)
			}
		}
		runs = append(runs, host+" "+strings.Join(where, " "))
	}
	socket, _ := postgres.PathsIn(dir + "/postgres")
	want := []string{
		"db --pgsql-host=" + socket + " --pgsql-port=15432",
		"db --pgsql-host=127.0.0.1 --pgsql-port=15432",
		"app --pgsql-host=198.18.21.2 --pgsql-port=15432",
		"app --pgsql-host=" + dir + "/remote-socket --pgsql-port=15432",
	}
	if strings.Join(runs, "\n") != strings.Join(want, "\n") {
		t.Errorf("sysbench runs (host, target):\n%s\nwant:\n%s", strings.Join(runs, "\n"), strings.Join(want, "\n"))
	}
	assertPrints(t, text,
		"agent postgres --dir "+dir+"/postgres --bind 198.18.21.2,127.0.0.1 --port 15432",
		"UNIX-CONNECT:"+socket+"/.s.PGSQL.15432",
		"app: start socat-client: setsid -f socat UNIX-LISTEN:"+dir+"/remote-socket/.s.PGSQL.15432,",
	)
}
