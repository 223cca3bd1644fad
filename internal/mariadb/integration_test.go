package mariadb

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/nstest"
)

// skipUnlessRoot skips tests that start a real mariadbd: they need root (user switch to
// mysql) and the MariaDB binaries.
func skipUnlessRoot(t *testing.T) {
	t.Helper()
	nstest.SkipUnlessRoot(t, "mariadb-install-db", "mariadb")
	if _, err := findBinary("", "mariadbd"); err != nil {
		nstest.Unavailable(t, "mariadbd not installed")
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startTestServer starts a server on 127.0.0.1 in a fresh dir; cleanup stops it and
// removes the dir even when the test fails.
func startTestServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	cfg.Dir = filepath.Join(nstest.SharedDir(t, "wlmdb"), "srv")
	if err := os.Mkdir(cfg.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg.BindAddress, cfg.Port = "127.0.0.1", freePort(t)
	if cfg.BufferPool == "" {
		cfg.BufferPool = "128M"
	}
	cfg.Logger = nstest.Logger(t, slog.LevelInfo)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s, err := Start(ctx, cfg)
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

// client runs the mariadb client as the bench user with extra flags and returns its output.
func client(t *testing.T, s *Server, sql string, flags ...string) (string, error) {
	t.Helper()
	args := append([]string{"--no-defaults", "--user=" + s.User, "--password=" + s.Password,
		"--database=" + s.DB, "--batch", "--skip-column-names"}, flags...)
	out, err := exec.Command("mariadb", append(args, "--execute="+sql)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func TestServerIntegration(t *testing.T) {
	skipUnlessRoot(t)
	ctx := context.Background()
	s := startTestServer(t, Config{ServerID: 1, LogBin: true, GTID: true})

	if s.Pid <= 0 || s.Password == "" || !strings.HasPrefix(s.Version, "10.") && !strings.HasPrefix(s.Version, "11.") {
		t.Errorf("server = %+v", s)
	}
	out, err := s.Exec(ctx, "SELECT 1+1, 'a b'")
	if err != nil || out != "2\ta b\n" {
		t.Errorf("Exec = %q, %v", out, err)
	}
	vars, err := s.Rows(ctx, "SELECT @@max_connections AS mc, @@back_log AS bl, "+
		"@@innodb_flush_log_at_trx_commit AS flush, @@have_ssl AS tls, @@log_bin AS binlog, "+
		"@@performance_schema AS ps, @@server_id AS id, @@gtid_strict_mode AS strict, @@tmpdir AS tmp")
	if err != nil || len(vars) != 1 {
		t.Fatalf("Rows = %v, %v", vars, err)
	}
	want := map[string]string{"mc": "4200", "bl": "4200", "flush": "2", "tls": "YES",
		"binlog": "1", "ps": "0", "id": "1", "strict": "1", "tmp": filepath.Join(s.Dir, "tmp")}
	for k, v := range want {
		if vars[0][k] != v {
			t.Errorf("%s = %q, want %q", k, vars[0][k], v)
		}
	}
	users, err := s.Exec(ctx, "SELECT CONCAT(User, '@', Host) FROM mysql.user WHERE User IN ('', 'sbtest') ORDER BY 1")
	if err != nil || users != "sbtest@%\nsbtest@localhost\n" {
		t.Errorf("users = %q, %v (anonymous users must be gone)", users, err)
	}

	tcp := []string{"--host=127.0.0.1", "--port=" + itoa(s.Port)}
	certs := []string{"--ssl", "--ssl-ca=" + filepath.Join(s.CertDir, CAFile),
		"--ssl-cert=" + filepath.Join(s.CertDir, ClientCertFile),
		"--ssl-key=" + filepath.Join(s.CertDir, ClientKeyFile), "--ssl-verify-server-cert"}
	tests := []struct {
		name  string
		sql   string
		flags []string
		want  string
	}{
		{"tcp plain", "SELECT CURRENT_USER(), VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME='Ssl_version'",
			append(tcp, "--skip-ssl"), "sbtest@%"}, // no TLS: Ssl_version is empty
		// --ssl-verify-server-cert: the certificate must name 127.0.0.1 and chain to ca.pem.
		{"tcp tls verified", "SELECT VARIABLE_VALUE LIKE 'TLSv1.%' FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME='Ssl_version'",
			append(tcp, certs...), "1"},
		{"tcp compressed", "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME='Compression'",
			append(tcp, "--compress", "--skip-ssl"), "ON"},
		{"socket", "SELECT CURRENT_USER()", []string{"--socket=" + s.Socket, "--protocol=socket"}, "sbtest@localhost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := client(t, s, tt.sql, tt.flags...)
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if out, err := client(t, s, "SELECT 1", append(tcp, "--skip-ssl", "--password=wrong")...); err == nil {
		t.Errorf("wrong password accepted: %q", out)
	}

	pid, sock := s.Pid, s.Socket
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := os.Stat("/proc/" + itoa(pid)); err == nil {
		t.Errorf("mariadbd %d still exists after Stop", pid)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind: %v", err)
	}
	if err := os.RemoveAll(s.Dir); err != nil {
		t.Errorf("dir not removable after Stop: %v", err)
	}
}

func TestReplicationIntegration(t *testing.T) {
	skipUnlessRoot(t)
	ctx := context.Background()
	primary := startTestServer(t, Config{ServerID: 1, LogBin: true, GTID: true})
	replica := startTestServer(t, Config{ServerID: 2, LogBin: true, GTID: true})

	if _, err := replica.SlaveStatus(ctx); !errors.Is(err, ErrNoSlave) {
		t.Errorf("fresh replica: SlaveStatus err = %v, want ErrNoSlave", err)
	}
	user, pw, err := primary.CreateReplUser(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := replica.ChangeMaster(ctx, primary.Host, primary.Port, user, pw, true); err != nil {
		t.Fatal(err)
	}
	if err := replica.StartSlave(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = replica.StopSlave(context.Background()) })
	if _, err := primary.Exec(ctx, "CREATE TABLE sbtest.t (id INT PRIMARY KEY) ENGINE=InnoDB; "+
		"INSERT INTO sbtest.t VALUES (1),(2),(3)"); err != nil {
		t.Fatal(err)
	}
	pos, err := primary.GTIDPos(ctx)
	if err != nil || !strings.HasPrefix(pos, "0-1-") {
		t.Fatalf("primary GTIDPos = %q, %v", pos, err)
	}
	if err := replica.WaitGTID(ctx, pos, 30*time.Second); err != nil {
		st, _ := replica.SlaveStatus(ctx)
		t.Fatalf("%v; slave status: IO=%s SQL=%s io_err=%q sql_err=%q", err, st["Slave_IO_Running"],
			st["Slave_SQL_Running"], st["Last_IO_Error"], st["Last_SQL_Error"])
	}
	if n, err := replica.Exec(ctx, "SELECT COUNT(*) FROM sbtest.t"); err != nil || n != "3\n" {
		t.Errorf("replica rows = %q, %v", n, err)
	}
	if rpos, _ := replica.GTIDPos(ctx); rpos != pos {
		t.Errorf("replica at %q, primary at %q", rpos, pos)
	}
	st, err := replica.SlaveStatus(ctx)
	if err != nil || st["Slave_IO_Running"] != "Yes" || st["Slave_SQL_Running"] != "Yes" ||
		st["Using_Gtid"] != "Slave_Pos" || st["Master_Port"] != itoa(primary.Port) {
		t.Errorf("slave status = %v, %v", st, err)
	}
	if v, _ := replica.Exec(ctx, "SELECT @@slave_compressed_protocol"); v != "1\n" {
		t.Errorf("slave_compressed_protocol = %q", v)
	}
	if err := replica.StopSlave(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := replica.SlaveStatus(ctx); st["Slave_IO_Running"] != "No" {
		t.Errorf("after StopSlave: IO running = %q", st["Slave_IO_Running"])
	}

	// `wirelab down` only has the pid from the state file: Stop must work from that.
	fromState := &Server{Pid: replica.Pid}
	if !fromState.alive() {
		t.Fatal("a running mariadbd was not recognised by its pid")
	}
	if err := fromState.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if fromState.alive() || replica.alive() {
		t.Error("mariadbd still running after Stop by pid")
	}
}

func TestStartFailureReportsErrorLog(t *testing.T) {
	skipUnlessRoot(t)
	dir := filepath.Join(nstest.SharedDir(t, "wlmdb"), "srv")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Start(context.Background(), Config{Dir: dir, BindAddress: "127.0.0.1", Port: freePort(t),
		BufferPool: "128M", Extra: map[string]string{"no_such_option": "1"}})
	if !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "no_such_option") {
		t.Fatalf("err = %v; want ErrNotReady quoting the error log", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Errorf("dir not removable: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
