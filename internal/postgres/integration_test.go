package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/dbserver"
	"github.com/wirelab/wirelab/internal/nstest"
)

// skipUnlessRoot skips tests that start a real postmaster: they need root (user switch to
// postgres, network namespaces) and the PostgreSQL 15 binaries.
func skipUnlessRoot(t *testing.T) string {
	t.Helper()
	nstest.SkipUnlessRoot(t, "setpriv", "ip")
	bin, err := FindBinDir()
	if err != nil {
		nstest.Unavailable(t, "%v", err)
	}
	if _, _, err := dbserver.UserIDs(DefaultOSUser); err != nil {
		nstest.Unavailable(t, "%v", err)
	}
	return bin
}

// startTestServer starts a server on 127.0.0.1 in ns (in a fresh dir); cleanup stops it
// and removes the dir even when the test fails.
func startTestServer(t *testing.T, ns string) *Server {
	t.Helper()
	dir := filepath.Join(nstest.SharedDir(t, "wlpg"), "srv")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s, err := Start(ctx, Config{NS: ns, Dir: dir, BindAddress: "127.0.0.1", Port: 5432,
		SharedBuffers: "128MB", MaxConnections: 100, Logger: nstest.Logger(t, slog.LevelInfo)})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return s
}

// client runs psql inside the server's namespace as root with the libpq environment of
// Env(mode) and returns its unaligned output.
func client(t *testing.T, s *Server, mode SSLMode, sql string, env ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("ip", "netns", "exec", s.NS, filepath.Join(s.binDir, "psql"), "-X", "-A", "-t", "-c", sql)
	cmd.Env = append(append(os.Environ(), s.Env(mode)...), env...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func TestServerIntegration(t *testing.T) {
	skipUnlessRoot(t)
	ctx := context.Background()
	s := startTestServer(t, nstest.Netns(t, "pgsrv"))

	if s.Pid <= 0 || s.Password == "" || !strings.HasPrefix(s.Version, "PostgreSQL 1") {
		t.Errorf("server = %+v", s)
	}
	if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", s.Pid)); strings.TrimSpace(string(comm)) != "postgres" {
		t.Errorf("Server.Pid %d is %q, want the postmaster", s.Pid, comm)
	}
	// The postmaster, its auxiliary processes and (none yet) backends, for CPU sampling.
	if pids := s.Pids(); len(pids) < 5 || pids[0] != s.Pid {
		t.Errorf("Pids = %v, want the postmaster %d first and its auxiliary processes", pids, s.Pid)
	}
	set, err := s.Settings(ctx)
	if err != nil || !set.SSL || set.MaxConnections != 100 || set.SynchronousCommit != "off" ||
		set.WALLevel != "replica" || set.SharedBuffers != "128MB" || !strings.HasPrefix(s.Version, "PostgreSQL "+set.Version) {
		t.Errorf("Settings = %+v, %v", set, err)
	}
	out, err := s.Exec(ctx, "CREATE TABLE t (id int PRIMARY KEY, s text)", "INSERT INTO t VALUES (1, 'a b'), (2, NULL)",
		"SELECT id, s FROM t ORDER BY id")
	if err != nil || out != "1\ta b\n2\tNULL\n" {
		t.Errorf("Exec = %q, %v", out, err)
	}
	rows, err := s.Rows(ctx, "SELECT id, s FROM t ORDER BY id")
	if err != nil || len(rows) != 2 || rows[1]["s"] != "NULL" || rows[0]["id"] != "1" {
		t.Errorf("Rows = %v, %v", rows, err)
	}

	ssl := "SELECT current_user || ' ' || ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"
	tests := []struct {
		name string
		mode SSLMode
		env  []string
		want string
	}{
		{"tcp plain", SSLDisable, nil, "sbtest false"},
		{"tcp tls required", SSLRequire, nil, "sbtest true"},
		// verify-full: the certificate must name 127.0.0.1 and chain to ca.pem.
		{"tcp tls verified", SSLVerifyFull, []string{"PGHOST=127.0.0.1"}, "sbtest true"},
		{"socket", SSLDisable, []string{"PGHOST=" + s.SocketDir}, "sbtest false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := client(t, s, tt.mode, ssl, tt.env...)
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if out, err := client(t, s, SSLDisable, "SELECT 1", "PGPASSWORD=wrong"); err == nil {
		t.Errorf("wrong password accepted: %q", out)
	}
	if out, err := client(t, s, SSLDisable, "SELECT 1", "PGUSER=postgres"); err == nil {
		t.Errorf("superuser got in over TCP: %q", out)
	}

	pid, sock := s.Pid, socketPath(s.SocketDir, s.Port)
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
		t.Errorf("postmaster %d still exists after Stop", pid)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind: %v", err)
	}
}

// TestRestartAndStopByPid reuses a datadir (Start skips initdb, keeps the data, rewrites
// the configuration) and stops a server the way `wirelab down` does: from its pid alone.
func TestRestartAndStopByPid(t *testing.T) {
	skipUnlessRoot(t)
	ctx := context.Background()
	s := startTestServer(t, nstest.Netns(t, "pgre"))
	if _, err := s.Exec(ctx, "CREATE TABLE kept (id int)", "INSERT INTO kept VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	// The defaults this time: 2100 connections and 1GB of shared buffers must start.
	again, err := Start(ctx, Config{NS: s.NS, Dir: s.Dir, BindAddress: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = again.Stop(context.Background()) })
	if set, err := again.Settings(ctx); err != nil || set.MaxConnections != DefaultMaxConnections || set.SharedBuffers != DefaultSharedBuffers {
		t.Errorf("restart with defaults: %+v, %v", set, err)
	}
	if out, err := again.Exec(ctx, "SELECT id FROM kept"); err != nil || out != "42\n" {
		t.Errorf("after restart: %q, %v", out, err)
	}
	fromState := &Server{Pid: again.Pid}
	if !fromState.alive() {
		st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", again.Pid))
		t.Fatalf("a running postmaster was not recognised by its pid: %s", st)
	}
	if err := fromState.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if fromState.alive() || again.alive() {
		t.Error("postmaster still running after Stop by pid")
	}
}

func TestStartFailureReportsLog(t *testing.T) {
	skipUnlessRoot(t)
	dir := filepath.Join(nstest.SharedDir(t, "wlpg"), "srv")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Start(context.Background(), Config{Dir: dir, BindAddress: "127.0.0.1", Port: 5432,
		SharedBuffers: "128MB", MaxConnections: 100, NS: nstest.Netns(t, "pgbad"),
		Extra: map[string]string{"no_such_setting": "1"}})
	if !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "no_such_setting") {
		t.Fatalf("err = %v; want ErrNotReady quoting the log", err)
	}
}

// TestStreamingReplica builds a replica from a base backup of a primary (both in one
// namespace, on two ports), and checks that rows written on the primary are replayed.
func TestStreamingReplica(t *testing.T) {
	skipUnlessRoot(t)
	ctx := context.Background()
	ns := nstest.Netns(t, "pgrepl")
	primary := startTestServer(t, ns)
	user, pw, err := primary.CreateReplUser(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := primary.Exec(ctx, "CREATE TABLE before_backup (id int PRIMARY KEY)", "INSERT INTO before_backup VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(nstest.SharedDir(t, "wlpg"), "replica")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	replica, err := Start(ctx, Config{NS: ns, Dir: dir, BindAddress: "127.0.0.1", Port: 5433,
		SharedBuffers: "128MB", MaxConnections: 100, Logger: nstest.Logger(t, slog.LevelInfo),
		CertDir: primary.CertDir, Upstream: &Upstream{Host: primary.Host, Port: primary.Port, User: user, Password: pw, BenchPassword: primary.Password}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = replica.Stop(context.Background()) })

	if out, err := replica.Exec(ctx, "SELECT pg_is_in_recovery(), (SELECT count(*) FROM before_backup)"); err != nil || out != "t\t1\n" {
		t.Errorf("replica: %q, %v; want in recovery with the backed-up row", out, err)
	}
	if _, err := primary.Exec(ctx, "CREATE TABLE after_backup AS SELECT g AS id FROM generate_series(1, 1000) g"); err != nil {
		t.Fatal(err)
	}
	lsn, err := primary.WALPosition(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := replica.WaitReplay(ctx, lsn, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if out, err := replica.Exec(ctx, "SELECT count(*) FROM after_backup"); err != nil || out != "1000\n" {
		t.Errorf("replica after_backup: %q, %v", out, err)
	}
	senders, err := primary.Senders(ctx)
	if err != nil || len(senders) != 1 || senders[0].State != "streaming" || senders[0].Application != "wirelab-replica" {
		t.Errorf("Senders = %+v, %v", senders, err)
	}
	// The bench role is the primary's copy: its password works on the replica.
	if got, err := client(t, replica, SSLDisable, "SELECT current_user"); err != nil || got != "sbtest" {
		t.Errorf("bench login on the replica: %q, %v", got, err)
	}
	// Both servers use one certificate set: the primary's CA verifies the replica.
	if got, err := client(t, replica, SSLVerifyFull, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
		"PGSSLROOTCERT="+filepath.Join(primary.CertDir, "ca.pem")); err != nil || got != "t" {
		t.Errorf("verify-full on the replica with the shared CA: %q, %v", got, err)
	}
	if _, err := replica.Exec(ctx, "INSERT INTO after_backup VALUES (0)"); err == nil {
		t.Error("the replica accepted a write")
	}
}
