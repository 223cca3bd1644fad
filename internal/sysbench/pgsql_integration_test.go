package sysbench

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/nstest"
	"github.com/wirelab/wirelab/internal/postgres"
)

// TestAgainstRealPostgres runs PostgreSQL inside its own namespace and sysbench's pgsql
// driver there over TCP, plain and with TLS, and from the host through the socket.
func TestAgainstRealPostgres(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	if _, err := postgres.FindBinDir(); err != nil {
		nstest.Unavailable(t, "%v", err)
	}
	skipUnlessRoot(t) // sysbench, ip
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ns := nstest.Netns(t, "sbpg")
	base := nstest.SharedDir(t, "wlsbpg") // user postgres must reach the datadir
	srv, err := postgres.Start(ctx, postgres.Config{NS: ns, Dir: base, BindAddress: "127.0.0.1",
		SharedBuffers: "128MB", MaxConnections: 100, Logger: logger, Extra: map[string]string{"log_connections": "on"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })

	tcp := Options{Driver: DriverPgSQL, Workload: "oltp_read_only", Tables: 2, TableSize: 10000, Threads: 2,
		Time: 3 * time.Second, Host: srv.Host, Port: srv.Port, User: srv.User, Password: srv.Password,
		DB: srv.DB, NS: ns}
	sock := tcp
	sock.NS, sock.Host, sock.Socket = "", "", srv.SocketDir
	if err := Prepare(ctx, sock, logger); err != nil {
		t.Fatal(err)
	}
	if n, err := srv.Exec(ctx, "SELECT count(*) FROM sbtest2"); err != nil || n != "10000\n" {
		t.Fatalf("sbtest2 has %q rows, %v", n, err)
	}
	tlsConns := func() int {
		b, err := os.ReadFile(srv.Log)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "user=sbtest database=sbtest SSL enabled")
	}
	run := func(name string, o Options) {
		t.Helper()
		var ivs []Interval
		sum, out, err := RunWithOutput(ctx, o, func(iv Interval) { ivs = append(ivs, iv) }, logger)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		t.Logf("%s: %.0f tps, %.0f qps, lat avg %.2f ms, %d intervals", name, sum.TPS, sum.QPS, sum.LatAvg, len(ivs))
		if sum.Transactions <= 0 || sum.Threads != o.Threads || len(ivs) == 0 || len(ivs) < int(o.Time.Seconds())-1 || ivs[0].TPS <= 0 {
			t.Errorf("%s: summary %+v, %d intervals", name, sum, len(ivs))
		}
	}
	before := tlsConns()
	run("pgsql plain", tcp)
	if n := tlsConns() - before; n != 0 {
		t.Errorf("plain run made %d TLS connections (libpq's default sslmode leaked in)", n)
	}
	withTLS := tcp
	withTLS.TLS = true
	run("pgsql tls", withTLS)
	if n := tlsConns() - before; n < withTLS.Threads {
		t.Errorf("TLS run: %d TLS connections, want >= %d", n, withTLS.Threads)
	}
	short := sock
	short.Time = 2 * time.Second
	run("pgsql socket", short)

	bad := tcp
	bad.Password, bad.Time = "wrong", time.Second
	if _, err := Run(ctx, bad, nil, logger); !errors.Is(err, ErrConnect) || !strings.Contains(err.Error(), "password authentication failed") {
		t.Errorf("wrong password: err = %v, want ErrConnect naming the reason", err)
	}
	if err := Cleanup(ctx, sock, logger); err != nil {
		t.Fatal(err)
	}
	if n, _ := srv.Exec(ctx, "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'sbtest%'"); n != "0\n" {
		t.Errorf("tables left after Cleanup: %q", n)
	}
}
