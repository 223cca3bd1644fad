package engine

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/mariadb"
	"github.com/wirelab/wirelab/internal/nstest"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// externalServer starts a MariaDB on 127.0.0.1 in this machine's namespace, as an existing
// server would be, with user wlx (a password with a space and a '#') on database wlext.
func externalServer(t *testing.T) (*mariadb.Server, DSN, string) {
	t.Helper()
	nstest.SkipUnlessRoot(t, "mariadb-install-db", "mariadb", "sysbench")
	dir := filepath.Join(nstest.SharedDir(t, "wlext"), "srv")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s, err := mariadb.Start(ctx, mariadb.Config{Dir: dir, BindAddress: "127.0.0.1", Port: port,
		BufferPool: "128M", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	const pw = "pw#1"
	if _, err := s.Exec(ctx, "CREATE DATABASE wlext; CREATE USER 'wlx'@'%' IDENTIFIED BY '"+pw+"'; GRANT ALL ON wlext.* TO 'wlx'@'%'"); err != nil {
		t.Fatal(err)
	}
	return s, DSN{User: "wlx", Host: "127.0.0.1", Port: port, DB: "wlext"}, pw
}

func TestExternalAgainstRealMariaDB(t *testing.T) {
	srv, dsn, pw := externalServer(t)
	ctx := context.Background()

	_, err := OpenExternal(ctx, ExternalConfig{DSN: dsn, Password: "wrong", PasswordFrom: "$WIRELAB_SERVER_PASSWORD"})
	if !errors.Is(err, ErrLoginRefused) || !strings.Contains(err.Error(), dsn.Addr()) || !strings.Contains(err.Error(), "$WIRELAB_SERVER_PASSWORD") {
		t.Errorf("wrong password: %v", err)
	}
	bad := dsn
	bad.DB = "nosuchdb"
	if _, err := OpenExternal(ctx, ExternalConfig{DSN: bad, Password: pw}); !errors.Is(err, ErrLoginRefused) || !strings.Contains(err.Error(), "CREATE DATABASE nosuchdb") {
		t.Errorf("unknown database: %v", err)
	}
	closed := dsn
	closed.Port = 1
	if _, err := OpenExternal(ctx, ExternalConfig{DSN: closed, Password: pw, Timeout: time.Second}); err == nil || errors.Is(err, ErrLoginRefused) || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("nothing listening: %v", err)
	}

	x, err := OpenExternal(ctx, ExternalConfig{DSN: dsn, Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Stop(ctx)
	f, err := x.Facts(ctx)
	if err != nil || !f.External || f.Engine != "mariadb" || !strings.Contains(f.Version, "MariaDB") || len(f.Settings) != len(MariaDBSettings) {
		t.Errorf("facts %+v, %v", f, err)
	}
	if x.Pid() != 0 || x.Pids() != nil || x.Conn().Socket != "" {
		t.Errorf("an external server has no pid, pids or socket: %d %v %+v", x.Pid(), x.Pids(), x.Conn())
	}
	if err := x.PingVia(ctx, (&net.Dialer{}).DialContext); err != nil {
		t.Errorf("PingVia: %v", err)
	}

	// sysbench prepares with the password out of its command line; the tables are seen,
	// then dropped.
	c := x.Conn()
	o := sysbench.Options{Workload: "oltp_read_only", Tables: 2, TableSize: 100, Host: c.Host, Port: c.Port,
		User: c.User, Password: c.Password, DB: c.DB, HidePassword: true}
	if err := sysbench.Prepare(ctx, o, nil); err != nil {
		t.Fatalf("prepare with the password in a config file: %v", err)
	}
	names := []string{"sbtest1", "sbtest2", "sbtest3"}
	got, err := x.ExistingTables(ctx, names)
	if err != nil || !slices.Equal(got, []string{"sbtest1", "sbtest2"}) {
		t.Errorf("existing tables %v, %v", got, err)
	}
	// TLS: sysbench 1.0.20's libmariadb checks the server's certificate against
	// cacert.pem and the server checks the client's, so an existing server needs its own
	// CA and a client certificate it trusts (--server-tls-dir); throw-away ones fail.
	other := t.TempDir()
	if err := mariadb.GenerateCerts(other, []string{"127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	tls := o
	tls.TLS, tls.CertDir, tls.Time, tls.Threads = true, other, time.Second, 1
	if _, err := sysbench.Run(ctx, tls, nil, nil); err == nil || !strings.Contains(err.Error(), "TLS/SSL error") {
		t.Errorf("TLS with another CA's files: %v, want a TLS error", err)
	}
	tls.CertDir = srv.CertDir // the server's CA as cacert.pem, and a client certificate it issued
	if _, err := sysbench.Run(ctx, tls, nil, nil); err != nil {
		t.Errorf("TLS with the server's own files: %v", err)
	}
	if err := x.DropTables(ctx, names); err != nil {
		t.Fatal(err)
	}
	if got, _ := x.ExistingTables(ctx, names); len(got) != 0 {
		t.Errorf("tables left after DropTables: %v", got)
	}
}
