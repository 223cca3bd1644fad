package sysbench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/mariadb"
	"github.com/wirelab/wirelab/internal/nstest"
)

func TestVersionOfInstalledSysbench(t *testing.T) {
	if _, err := exec.LookPath("sysbench"); err != nil {
		nstest.Unavailable(t, "sysbench not installed")
	}
	v, err := Version(context.Background())
	if err != nil || !strings.HasPrefix(v, "1.") {
		t.Errorf("Version = %q, %v", v, err)
	}
}

func skipUnlessRoot(t *testing.T) {
	t.Helper()
	nstest.SkipUnlessRoot(t, "sysbench", "mariadb", "mariadb-install-db", "ip")
	if _, err := os.Stat("/usr/sbin/mariadbd"); err != nil {
		if _, err := exec.LookPath("mariadbd"); err != nil {
			nstest.Unavailable(t, "mariadbd not installed")
		}
	}
}

func statusInt(t *testing.T, s *mariadb.Server, name string) int64 {
	t.Helper()
	out, err := s.Exec(context.Background(), "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME='"+name+"'")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil {
		t.Fatalf("%s = %q", name, out)
	}
	return n
}

func gone(pid int) bool { return !nstest.Running(pid) }

// TestAgainstRealMariaDB runs the server inside its own namespace, as the lab does, and
// sysbench over TCP with TLS, with compression, and via the socket.
func TestAgainstRealMariaDB(t *testing.T) {
	skipUnlessRoot(t)
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ns := nstest.Netns(t, "sb")
	base, err := os.MkdirTemp("", "wlsb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil { // user mysql must reach the datadir
		t.Fatal(err)
	}
	srv, err := mariadb.Start(ctx, mariadb.Config{NS: ns, Dir: base, BindAddress: "127.0.0.1",
		BufferPool: "128M", Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", srv.Pid)); strings.TrimSpace(string(comm)) != "mariadbd" {
		t.Errorf("Server.Pid %d is %q, want mariadbd itself", srv.Pid, comm)
	}

	tcp := Options{Workload: "oltp_read_only", Tables: 2, TableSize: 10000, Threads: 2,
		Time: 2 * time.Second, Host: srv.Host, Port: srv.Port, User: srv.User,
		Password: srv.Password, DB: srv.DB, CertDir: srv.CertDir, NS: ns}
	// Prepare from the host through the socket: a unix socket is reachable from any netns.
	sock := tcp
	sock.NS, sock.Host, sock.Port, sock.Socket = "", "", 0, srv.Socket
	if err := Prepare(ctx, sock, logger); err != nil {
		t.Fatal(err)
	}
	if n, _ := srv.Exec(ctx, "SELECT COUNT(*) FROM sbtest.sbtest2"); n != "10000\n" {
		t.Fatalf("sbtest2 has %q rows", n)
	}

	run := func(name string, o Options) (*Summary, int64, int64) {
		t.Helper()
		tlsBefore, bytesBefore := statusInt(t, srv, "SSL_ACCEPTS"), statusInt(t, srv, "BYTES_SENT")
		var ivs []Interval
		var pid int
		o.OnStart = func(p int) { pid = p }
		sum, out, err := RunWithOutput(ctx, o, func(iv Interval) { ivs = append(ivs, iv) }, logger)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		if sum.Transactions <= 0 || sum.Threads != o.Threads || len(ivs) < 1 || ivs[0].TPS <= 0 || pid <= 0 {
			t.Errorf("%s: summary %+v, %d intervals, pid %d", name, sum, len(ivs), pid)
		}
		return sum, statusInt(t, srv, "SSL_ACCEPTS") - tlsBefore, statusInt(t, srv, "BYTES_SENT") - bytesBefore
	}

	withTLS := tcp
	withTLS.TLS = true
	_, tlsConns, _ := run("tls", withTLS)
	if tlsConns < int64(withTLS.Threads) {
		t.Errorf("TLS run: %d TLS handshakes, want >= %d", tlsConns, withTLS.Threads)
	}
	plain, plainTLS, plainBytes := run("plain", tcp)
	if plainTLS != 0 {
		t.Errorf("plain run made %d TLS handshakes", plainTLS)
	}
	compressed := tcp
	compressed.Compression = true
	comp, _, compBytes := run("compression", compressed)
	// Bytes_sent counts what went on the wire, so compression must shrink it per query.
	perQPlain, perQComp := float64(plainBytes)/float64(plain.Queries), float64(compBytes)/float64(comp.Queries)
	t.Logf("TLS handshakes %d; bytes/query plain %.0f, compressed %.0f", tlsConns, perQPlain, perQComp)
	if perQComp > 0.8*perQPlain {
		t.Errorf("compression: %.0f bytes/query vs %.0f plain; want < 80%%", perQComp, perQPlain)
	}
	run("socket", sock)
	checkHistogramRun(t, tcp, logger)

	bad := tcp
	bad.Password = "wrong"
	if _, err := Run(ctx, bad, nil, logger); !errors.Is(err, ErrConnect) || !strings.Contains(err.Error(), "1045") {
		t.Errorf("wrong password: err = %v, want ErrConnect with error 1045", err)
	}

	// Cancel mid-run: Run returns promptly and sysbench is gone.
	long := tcp
	long.Time = time.Minute
	var pid int
	long.OnStart = func(p int) { pid = p }
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	if _, err := Run(cctx, long, func(Interval) { cancel() }, logger); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: err = %v", err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("cancelled run took %s", d)
	}
	if !gone(pid) {
		t.Errorf("sysbench %d survived the cancel", pid)
	}

	if err := Cleanup(ctx, sock, logger); err != nil {
		t.Fatal(err)
	}
	if n, _ := srv.Exec(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA='sbtest'"); n != "0\n" {
		t.Errorf("tables left after Cleanup: %q", n)
	}
	mpid := srv.Pid
	if err := srv.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if !gone(mpid) {
		t.Errorf("mariadbd %d still running after Stop", mpid)
	}
	if err := os.RemoveAll(filepath.Join(base, "data")); err != nil {
		t.Errorf("datadir not removable: %v", err)
	}
}

// checkHistogramRun runs sysbench with its histogram and a counter reset after the first
// second, as a study's point does, and checks the parsed histogram against sysbench's own
// summary. With WIRELAB_CAPTURE set, the output is written there (a fixture).
func checkHistogramRun(t *testing.T, o Options, logger *slog.Logger) {
	t.Helper()
	o.Threads, o.Time, o.Histogram, o.ResetAfter = 4, 3*time.Second, true, time.Second
	sum, out, err := RunWithOutput(context.Background(), o, nil, logger)
	if err != nil {
		t.Fatalf("histogram run: %v\n%s", err, out)
	}
	if dir := os.Getenv("WIRELAB_CAPTURE"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "ro_histogram_reset.txt"), []byte(out), 0o644); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(out, "Checkpoint report:") || sum.Histogram == nil {
		t.Fatalf("no checkpoint report or no histogram:\n%s", out)
	}
	if got := sum.Histogram.Percentile(float64(sum.Percentile)); math.Abs(got-sum.LatPct) > 0.006 {
		t.Errorf("histogram p%d = %.3f ms, sysbench says %.2f", sum.Percentile, got, sum.LatPct)
	}
	if n := sum.Histogram.Count(); n <= 0 || n >= sum.Transactions {
		t.Errorf("histogram holds %d transactions of %d: want those after the reset only", n, sum.Transactions)
	}
}
