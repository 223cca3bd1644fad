package pgbench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/nstest"
	"github.com/wirelab/wirelab/internal/postgres"
)

func skipUnlessRoot(t *testing.T) {
	t.Helper()
	nstest.SkipUnlessRoot(t, "ip", "setpriv")
	dir, err := postgres.FindBinDir()
	if err != nil {
		nstest.Unavailable(t, "%v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pgbench")); err != nil {
		nstest.Unavailable(t, "pgbench not installed")
	}
}

// TestAgainstRealPostgres runs the server inside its own namespace, as the lab does, and
// pgbench there over TCP, plain and with TLS.
func TestAgainstRealPostgres(t *testing.T) {
	skipUnlessRoot(t)
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ns := nstest.Netns(t, "pgb")
	base := nstest.SharedDir(t, "wlpgb") // user postgres must reach the datadir
	// log_connections: the log then says which connections used TLS.
	srv, err := postgres.Start(ctx, postgres.Config{NS: ns, Dir: base, BindAddress: "127.0.0.1",
		SharedBuffers: "128MB", MaxConnections: 100, Logger: logger, Extra: map[string]string{"log_connections": "on"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })

	tcp := Options{Builtin: SelectOnly, Clients: 2, Time: 3 * time.Second, Host: srv.Host, Port: srv.Port,
		User: srv.User, Password: srv.Password, DB: srv.DB, NS: ns}
	// Initialise from the host through the socket: a unix socket is reachable from any netns.
	sock := tcp
	sock.NS, sock.Host = "", srv.SocketDir
	if err := Init(ctx, sock, logger); err != nil {
		t.Fatal(err)
	}
	if n, err := srv.Exec(ctx, "SELECT count(*) FROM pgbench_accounts"); err != nil || n != "100000\n" {
		t.Fatalf("pgbench_accounts has %q rows, %v", n, err)
	}

	run := func(name string, o Options) (*Summary, []Progress) {
		t.Helper()
		var ps []Progress
		var pid int
		o.OnStart = func(p int) { pid = p }
		sum, stdout, stderr, err := RunWithOutput(ctx, o, func(p Progress) { ps = append(ps, p) }, logger)
		if err != nil {
			t.Fatalf("%s: %v\n%s\n%s", name, err, stdout, stderr)
		}
		t.Logf("%s: %.0f tps, lat %.3f ms (stddev %.3f), %d transactions, %d progress lines",
			name, sum.TPS, sum.LatAvgMs, sum.LatStddevMs, sum.Transactions, len(ps))
		if sum.TPS <= 0 || sum.Transactions <= 0 || sum.Clients != o.Clients || !sum.HasStddev || pid <= 0 {
			t.Errorf("%s: summary %+v, pid %d", name, sum, pid)
		}
		// A -T N run prints N or N-1 progress lines: the last may be lost to the run's end.
		want := int(o.Time.Seconds()) - 1
		if len(ps) < want || len(ps) == 0 || ps[0].T != 1 || ps[0].TPS <= 0 || ps[len(ps)-1].T != float64(len(ps)) {
			t.Errorf("%s: progress %+v, want %d+ per-second lines from 1 s", name, ps, want)
		}
		return sum, ps
	}
	tlsBefore := strings.Count(readLog(t, srv), "SSL enabled")
	run("select-only plain", tcp)
	if n := strings.Count(readLog(t, srv), "SSL enabled"); n != tlsBefore {
		t.Errorf("plain run made %d TLS connections", n-tlsBefore)
	}
	withTLS := tcp
	withTLS.SSLMode = "require"
	run("select-only tls", withTLS)
	if n := strings.Count(readLog(t, srv), "SSL enabled") - tlsBefore; n < withTLS.Clients {
		t.Errorf("TLS run: %d TLS connections, want >= %d", n, withTLS.Clients)
	}
	tpcb := tcp
	tpcb.Builtin, tpcb.Time = TPCB, 2*time.Second
	if sum, _ := run("tpc-b", tpcb); sum.TransactionType != "<builtin: TPC-B (sort of)>" {
		t.Errorf("tpc-b ran %q", sum.TransactionType)
	}

	checkLatencyLog(t, tpcb, logger)

	bad := tcp
	bad.Password, bad.Time = "wrong", time.Second
	if _, err := Run(ctx, bad, nil, logger); !errors.Is(err, ErrConnect) || !strings.Contains(err.Error(), "password authentication failed") {
		t.Errorf("wrong password: err = %v, want ErrConnect naming the reason", err)
	}

	// Cancel mid-run: Run returns promptly and pgbench is gone.
	long := tcp
	long.Time = time.Minute
	var pid int
	long.OnStart = func(p int) { pid = p }
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	if _, err := Run(cctx, long, func(Progress) { cancel() }, logger); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: err = %v", err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("cancelled run took %s", d)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
		t.Errorf("pgbench %d survived the cancel", pid)
	}
}

func readLog(t *testing.T, s *postgres.Server) string {
	t.Helper()
	b, err := os.ReadFile(s.Log)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkLatencyLog runs pgbench with its per-transaction log, once into a directory the
// test keeps (WIRELAB_CAPTURE, for a fixture, or a temporary one) and once through Run's
// own, and checks that every transaction was logged.
func checkLatencyLog(t *testing.T, o Options, logger *slog.Logger) {
	t.Helper()
	capture := os.Getenv("WIRELAB_CAPTURE")
	if capture == "" {
		capture = t.TempDir()
	}
	dir := filepath.Join(capture, "tpcb_log")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	kept := o
	kept.logPrefix = filepath.Join(dir, "tx")
	sum, stdout, stderr, err := RunWithOutput(context.Background(), kept, nil, logger)
	if err != nil {
		t.Fatalf("logged run: %v\n%s\n%s", err, stdout, stderr)
	}
	_ = os.WriteFile(filepath.Join(capture, "tpcb_log.stdout"), []byte(stdout), 0o644)
	lg, err := ReadLogs(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if n := lg.Histogram.Count() + lg.Skipped + lg.Failed; n != sum.Transactions || lg.Skipped == 0 || lg.MaxMs <= 0 {
		t.Errorf("log: %d kept + %d warm-up + %d failed, max %.3f ms; pgbench counted %d",
			lg.Histogram.Count(), lg.Skipped, lg.Failed, lg.MaxMs, sum.Transactions)
	}
	o.LatencyLog, o.LatencySkip = true, time.Second
	sum, err = Run(context.Background(), o, nil, logger)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Logged == nil || sum.Logged.Histogram.Percentile(99) < sum.Logged.Histogram.Percentile(50) {
		t.Errorf("Run with LatencyLog: %+v", sum.Logged)
	}
	if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "wirelab-pgbench-log-*")); len(left) > 0 {
		t.Errorf("log directories left behind: %v", left)
	}
}
