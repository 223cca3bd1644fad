package e2e

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/mariadb"
	"github.com/wirelab/wirelab/internal/nstest"
)

// existingPW is the existing server's password: it must appear on no command line.
const existingPW = "ext#pw3"

// `wirelab run --hosts` with an existing server (server: {dsn: ...}): the test starts a
// MariaDB of its own on the server host (its namespace, on its address) as the existing
// server. wirelab never logs in to that host: the client's sysbench prepares the data set
// and loads the server at the DSN's address across the client's shaped NIC, the password
// reaches it in a private file, the server's CPU is reported unknown, only wirelab's
// tables are created and then dropped, and the server still runs afterwards.
func TestSSHRunAgainstAnExistingServer(t *testing.T) {
	p, _ := sshHosts(t, "198.18.23.1", "198.18.23.2")
	srv := existingOnHost(t, p.NSB, p.AddrB, 3306)
	inv := filepath.Join(p.Dir, "hosts-existing.yaml")
	if err := os.WriteFile(inv, []byte(fmt.Sprintf(`known_hosts: %s
hosts:
  - {name: app, role: client, address: %s, nic: eth0, user: root, key: %s}
  - name: db
    role: server
    server: {dsn: "wlx@tcp(%s:3306)/wlext", password_env: WL_EXISTING_PW}
`, p.KnownHosts, p.AddrA, p.Key, p.AddrB)), 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := filepath.Glob("/tmp/wirelab-*")
	state, out := t.TempDir(), t.TempDir()
	args := []string{"run", "--hosts", inv, "--rate", "20mbit", "--threads", "4", "--duration", "3s", "--warmup", "1s",
		"--tables", "1", "--table-size", "1000", "--out", out}

	// A wrong password: a usage error naming the field, before any host is touched.
	cmd := inClient(p, state, args...)
	cmd.Env = append(cmd.Env, "WL_EXISTING_PW=wrong")
	b, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(b), "host db: server.dsn") ||
		!strings.Contains(string(b), "server.password_env $WL_EXISTING_PW") {
		t.Errorf("wrong password: exit %d, %s; want 2 naming the host, the field and the password's source", code, b)
	}

	// The dry run prints the plan on the client alone and logs in nowhere.
	cmd = inClient(p, state, append(args, "--dry-run")...)
	cmd.Env = append(cmd.Env, "WL_EXISTING_PW="+existingPW)
	if b, err := cmd.Output(); err != nil || !strings.Contains(string(b), "# existing server wlx@tcp(198.18.23.2:3306)/wlext") ||
		strings.Contains(string(b), "\ndb: ") || strings.Contains(string(b), existingPW) {
		t.Errorf("dry run: %v\n%s", err, b)
	}

	cmd = inClient(p, state, args...)
	cmd.Env = append(cmd.Env, "WL_EXISTING_PW="+existingPW)
	var outb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outb, &outb
	seen := watchCommandLines(t, existingPW)
	start := time.Now()
	err := cmd.Run()
	if lines := seen(); len(lines) > 0 {
		t.Errorf("the password was on a command line: %q", lines)
	}
	if err != nil {
		t.Fatalf("run --hosts against an existing server: %v\n%s", err, outb.String())
	}
	run := readRun(t, out)
	if len(run.Points) != 1 {
		t.Fatalf("%d points, want 1", len(run.Points))
	}
	pt := run.Points[0]
	t.Logf("existing server over --hosts, 20mbit, 4 threads, 3 s: %.0f TPS, up %.0f B/s, down %.0f B/s, utilisation %.2f, cpu client %.2f server %.2f, %s (%s); wirelab ran %s",
		pt.TPS, pt.WireBytesPerSUp, pt.WireBytesPerSDown, pt.LinkUtilization, pt.CPUClient, pt.CPUServer, pt.Bottleneck, pt.BottleneckWhy, time.Since(start).Round(time.Second))
	if pt.Failed || pt.TPS <= 0 || pt.WireBytesPerSUp <= 0 || pt.WireBytesPerSDown <= 0 {
		t.Errorf("point: failed %v (%s), TPS %.1f, wire %.0f/%.0f B/s: want transactions and bytes both ways on the shaped link",
			pt.Failed, pt.FailReason, pt.TPS, pt.WireBytesPerSUp, pt.WireBytesPerSDown)
	}
	// oltp_read_only fills 20mbit server->client from a few threads: the load crossed the
	// shaped NIC, not a way around it.
	if pt.LinkUtilization < 0.8 || pt.LinkUtilization > 1.05 {
		t.Errorf("utilisation %.2f: want the 20mbit link full", pt.LinkUtilization)
	}
	if pt.CPUServer != 0 || pt.CPUClient <= 0 {
		t.Errorf("cpu server %.2f client %.2f: want the client's measured and the existing server's unknown (0)", pt.CPUServer, pt.CPUClient)
	}
	if s := run.Environment.Server; s == nil || !s.External || !strings.Contains(s.Version, "MariaDB") {
		t.Errorf("environment.server %+v: want the existing server, external, with its version", s)
	}
	if !strings.Contains(strings.Join(run.Notes, " "), "its host is not logged in to") {
		t.Errorf("notes do not say the server's host was not used: %q", run.Notes)
	}
	assertOnlyKeep(t, srv, "run")

	// study bandwidth: TLS (n3, a default experiment) is refused by name; n1 and n2
	// (compression) run on both links.
	bw := []string{"study", "bandwidth", "--hosts", inv, "--threads", "4", "--duration", "2s", "--warmup", "1s",
		"--tables", "1", "--table-size", "1000", "--out", t.TempDir()}
	cmd = inClient(p, state, bw...)
	cmd.Env = append(cmd.Env, "WL_EXISTING_PW="+existingPW)
	if b, _ := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(b), "--experiments n1,n2") {
		t.Errorf("bandwidth with n3: exit %d, %s; want a usage error naming the experiments to keep", cmd.ProcessState.ExitCode(), b)
	}
	bwOut := t.TempDir()
	bw = append(bw, "--experiments", "n1,n2", "--out", bwOut)
	cmd = inClient(p, state, bw...)
	cmd.Env = append(cmd.Env, "WL_EXISTING_PW="+existingPW)
	start = time.Now()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("study bandwidth --hosts against an existing server: %v\n%s", err, b)
	}
	took := time.Since(start).Round(time.Second)
	run = readRun(t, bwOut)
	if len(run.Points) != 4 {
		t.Errorf("%d points, want 4 (n1, n2 on two links, 4 threads)", len(run.Points))
	}
	for _, pt := range run.Points {
		t.Logf("bandwidth %s: %.0f TPS, up %.0f B/s, down %.0f B/s, utilisation %.2f, cpu client %.2f, %s", pt.Series, pt.TPS,
			pt.WireBytesPerSUp, pt.WireBytesPerSDown, pt.LinkUtilization, pt.CPUClient, pt.Bottleneck)
		if pt.Failed || pt.TPS <= 0 || pt.WireBytesPerSDown <= 0 || pt.CPUServer != 0 {
			t.Errorf("%s: failed %v (%s), TPS %.1f, down %.0f B/s, cpu server %.2f", pt.Series, pt.Failed, pt.FailReason, pt.TPS, pt.WireBytesPerSDown, pt.CPUServer)
		}
	}
	t.Logf("study bandwidth --hosts (4 points) took %s", took)
	assertOnlyKeep(t, srv, "study bandwidth")

	// A run killed with SIGKILL leaves its tables; `down --hosts` drops them (the run
	// recorded them on the client) along with the rest.
	t.Setenv("WL_EXISTING_PW", existingPW)
	r := startInClient(t, p, state, "run", "--hosts", inv, "--rate", "20mbit", "--threads", "4", "--duration", "60s",
		"--tables", "1", "--table-size", "1000", "--out", t.TempDir())
	r.waitFor(t, func() bool { return sysbenchRuns(p) && hasTable(srv, "sbtest1") }, func() string { return "the load on sbtest1" })
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = r.wait()
	b, err = inClient(p, state, "down", "--hosts", inv).CombinedOutput()
	if err != nil || !strings.Contains(string(b), "dropped sbtest1, left by a run, in wlext") || !strings.Contains(string(b), "on 1 hosts of") {
		t.Errorf("down --hosts after a kill -9: %v\n%s", err, b)
	}
	t.Logf("down --hosts after a kill -9: %s", strings.TrimSpace(string(b)))
	assertOnlyKeep(t, srv, "down --hosts")
	deadline := time.Now().Add(15 * time.Second) // sysbench ends once its SSH session is gone
	for sysbenchRuns(p) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	assertHostsClean(t, p, before, "mariadbd")
}

// hasTable says whether the existing server's wlext has table name.
func hasTable(srv *mariadb.Server, name string) bool {
	out, err := srv.Exec(context.Background(), "SELECT table_name FROM information_schema.tables WHERE table_schema='wlext' AND table_name='"+name+"'")
	return err == nil && strings.TrimSpace(out) == name
}

// assertOnlyKeep fails unless the existing server answers and its database holds the
// user's table alone: wirelab dropped what it created, and nothing else.
func assertOnlyKeep(t *testing.T, srv *mariadb.Server, after string) {
	t.Helper()
	tables, err := srv.Exec(context.Background(), "SELECT table_name FROM information_schema.tables WHERE table_schema='wlext'")
	if err != nil {
		t.Errorf("the existing server after %s: %v", after, err)
	} else if got := strings.Fields(tables); len(got) != 1 || got[0] != "keep" {
		t.Errorf("tables in wlext after %s: %v, want the user's keep alone", after, got)
	}
}

// existingOnHost starts MariaDB in namespace ns ("" = this machine's) on addr:port with
// user wlx (password existingPW) on database wlext and a table of the user's own (keep)
// that wirelab must leave alone. Cleanup stops it.
func existingOnHost(t *testing.T, ns, addr string, port int) *mariadb.Server {
	t.Helper()
	dir := filepath.Join(nstest.SharedDir(t, "wlexh"), "srv")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srv, err := mariadb.Start(ctx, mariadb.Config{NS: ns, Dir: dir, BindAddress: addr, Port: port, BufferPool: "128M",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	if _, err := srv.Exec(ctx, "CREATE DATABASE wlext; CREATE TABLE wlext.keep (id INT PRIMARY KEY); INSERT INTO wlext.keep VALUES (1);"+
		"CREATE USER 'wlx'@'%' IDENTIFIED BY '"+existingPW+"'; GRANT ALL ON wlext.* TO 'wlx'@'%'"); err != nil {
		t.Fatal(err)
	}
	return srv
}

// watchCommandLines reads every process's command line on this machine (the hosts share
// it) every 50 ms until the returned function is called, which returns the ones that
// held secret.
func watchCommandLines(t *testing.T, secret string) func() []string {
	t.Helper()
	done := make(chan struct{})
	var mu sync.Mutex
	var hits []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			files, _ := filepath.Glob("/proc/[0-9]*/cmdline")
			for _, f := range files {
				b, _ := os.ReadFile(f)
				if line := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(line, secret) {
					mu.Lock()
					hits = append(hits, line)
					mu.Unlock()
				}
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() []string {
		close(done)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return hits
	}
}
