package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/nstest"
)

// TestSSHPostgres runs `wirelab run --hosts --engine postgres` between the two SSH hosts:
// the server host's agent starts PostgreSQL from this machine's postgresql-15 in a private
// datadir and port, sysbench's pgsql driver loads it from the client host across the
// shaped NIC, and the run must measure every point, name PostgreSQL and the server host
// in its report and leave nothing on the hosts; so must the bandwidth study's TLS
// experiment (sslmode=require). Then a run killed with SIGKILL: the
// dead-man switch removes the client's shaping by itself, the server's agent keeps
// PostgreSQL until `down --hosts`, which removes it, its datadir and everything else.
func TestSSHPostgres(t *testing.T) {
	p, inv := sshHosts(t, "198.18.17.1", "198.18.17.2")
	startPostgres(t, inv)
	before, _ := filepath.Glob("/tmp/wirelab-*")
	common := []string{"--hosts", inv, "--engine", "postgres", "--rate", "20mbit", "--tables", "1",
		"--table-size", "10000", "--buffer-pool", "128M"}

	out := t.TempDir()
	args := append([]string{"run", "--threads", "1,4", "--duration", "3s", "--warmup", "1s", "--out", out}, common...)
	if b, err := inClient(p, t.TempDir(), args...).CombinedOutput(); err != nil {
		t.Fatalf("run --hosts --engine postgres: %v\n%s", err, b)
	}
	run := readRun(t, out)
	if len(run.Points) != 2 {
		t.Errorf("%d points, want 2 (1 and 4 threads)", len(run.Points))
	}
	for _, pt := range run.Points {
		t.Logf("threads=%d: %.1f TPS, server CPU %.2f cores, client CPU %.2f, wire up %.0f down %.0f B/s, %s",
			pt.Threads, pt.TPS, pt.CPUServer, pt.CPUClient, pt.WireBytesPerSUp, pt.WireBytesPerSDown, pt.Bottleneck)
		if pt.Failed || pt.TPS <= 0 || pt.CPUServer <= 0 || pt.WireBytesPerSDown <= 0 {
			t.Errorf("threads=%d: failed=%v (%s), TPS %.1f, server CPU %.2f, wire down %.0f B/s",
				pt.Threads, pt.Failed, pt.FailReason, pt.TPS, pt.CPUServer, pt.WireBytesPerSDown)
		}
	}
	if s := run.Environment.Server; s == nil || s.Engine != "postgres" || !strings.HasPrefix(s.Version, "PostgreSQL ") || len(s.Settings) == 0 {
		t.Errorf("environment.server = %+v, want the remote PostgreSQL's version and settings", s)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"PostgreSQL 15", "server host db", "client host app", "synchronous_commit = off"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("report.md does not name %q", w)
		}
	}
	assertHostsClean(t, p, before)

	// The bandwidth study's TLS experiment: libpq's sslmode=require on both links.
	out = t.TempDir()
	bw := []string{"study", "bandwidth", "--hosts", inv, "--engine", "postgres", "--experiments", "n3", "--threads", "1",
		"--duration", "3s", "--warmup", "1s", "--tables", "1", "--table-size", "10000", "--buffer-pool", "128M", "--out", out}
	if b, err := inClient(p, t.TempDir(), bw...).CombinedOutput(); err != nil {
		t.Fatalf("study bandwidth --hosts --engine postgres: %v\n%s", err, b)
	}
	run = readRun(t, out)
	if len(run.Points) != 4 {
		t.Errorf("%d points, want 4 (plain and TLS on two links)", len(run.Points))
	}
	for _, pt := range run.Points {
		t.Logf("%s threads=%d: %.1f TPS, wire down %.0f B/s", pt.Series, pt.Threads, pt.TPS, pt.WireBytesPerSDown)
		if pt.Failed || pt.TPS <= 0 {
			t.Errorf("%s: failed=%v (%s), TPS %.1f", pt.Series, pt.Failed, pt.FailReason, pt.TPS)
		}
	}
	assertHostsClean(t, p, before)

	// Killed mid-run: the switch and `down --hosts` clean up after it.
	const ttl = 4 * time.Second
	state := t.TempDir()
	t.Cleanup(func() { _ = inClient(p, state, "down", "--hosts", inv).Run() })
	r := startInClient(t, p, state, append([]string{"run", "--threads", "4", "--duration", "120s",
		"--deadman-ttl", ttl.String(), "--out", t.TempDir()}, common...)...)
	shaped := func() bool {
		q, _ := exec.Command("ip", "netns", "exec", p.NSA, "tc", "qdisc", "show", "dev", "eth0").Output()
		return strings.Contains(string(q), "htb")
	}
	r.waitFor(t, func() bool { return shaped() && sysbenchRuns(p) && postgresRuns(p) }, func() string {
		return fmt.Sprintf("shaped load on PostgreSQL (shaped %v, sysbench %v, postgres %v)", shaped(), sysbenchRuns(p), postgresRuns(p))
	})
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = r.wait()
	start := time.Now()
	for shaped() {
		if time.Since(start) > ttl+3*time.Second {
			t.Fatalf("the client's NIC is still shaped %s after SIGKILL (TTL %s)", time.Since(start).Round(time.Second), ttl)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("shaping removed by the dead-man switch %s after SIGKILL (TTL %s)", time.Since(start).Round(100*time.Millisecond), ttl)
	if !postgresRuns(p) {
		t.Errorf("PostgreSQL stopped without its agent being told: down --hosts had nothing to remove")
	}
	if b, err := inClient(p, state, "down", "--hosts", inv).CombinedOutput(); err != nil {
		t.Fatalf("down --hosts: %v\n%s", err, b)
	}
	if postgresRuns(p) {
		t.Errorf("PostgreSQL still runs on the server host after down --hosts")
	}
	// sysbench ends when its SSH session is gone; down does not chase it.
	deadline := time.Now().Add(15 * time.Second)
	for sysbenchRuns(p) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	assertHostsClean(t, p, before)
}

// startPostgres makes the inventory's server one where wirelab starts PostgreSQL.
func startPostgres(t *testing.T, inv string) {
	t.Helper()
	b, err := os.ReadFile(inv)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "start: mariadb", "start: postgres", 1)
	if s == string(b) {
		t.Fatalf("%s has no start: mariadb to replace:\n%s", inv, b)
	}
	if err := os.WriteFile(inv, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// postgresRuns reports whether a postgres process runs in the server host.
func postgresRuns(p *nstest.SSHPair) bool {
	o, _ := exec.Command("ip", "netns", "pids", p.NSB).Output()
	for _, pid := range strings.Fields(string(o)) {
		if c, _ := os.ReadFile("/proc/" + pid + "/comm"); strings.TrimSpace(string(c)) == "postgres" {
			return true
		}
	}
	return false
}
