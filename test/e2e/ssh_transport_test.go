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
	"github.com/wirelab/wirelab/internal/result"
)

// transportQueriesPerTxn is what one of the transport study's transactions waits for: 25
// point selects and 4 range queries, no BEGIN/COMMIT, one round trip each.
const transportQueriesPerTxn = 29

// TestSSHTransport runs `study transport --hosts` between the two SSH hosts with a 10 ms
// round trip: every path at each thread count is measured; the two socket-side rows
// (their sysbench on the server host) send nothing across the shaped link and are fast,
// the two remote rows (sysbench on the client, directly or through the socat hops) cross
// it and pay 29 round trips a transaction. Nothing is left on the hosts after the run,
// nor after `down --hosts`.
func TestSSHTransport(t *testing.T) {
	requireSocat(t)
	p, inv := sshHosts(t, "198.18.16.1", "198.18.16.2")
	sshTransport(t, p, inv)
}

// TestSSHTransportPostgres is TestSSHTransport on the server host's PostgreSQL, which
// listens on wirelab's port there (15432): every row must reach it on that port, the
// socket rows and the socat hops through its .s.PGSQL.15432 socket.
func TestSSHTransportPostgres(t *testing.T) {
	requireSocat(t)
	p, inv := sshHosts(t, "198.18.24.1", "198.18.24.2")
	startPostgres(t, inv)
	sshTransport(t, p, inv, "--engine", "postgres", "--buffer-pool", "128M")
}

// sshTransport runs the transport study with a 10 ms round trip on the pair p described
// by inv (extra: the engine's flags) and checks every row's place: the socket-side rows
// send nothing across the shaped link and are fast, the remote rows cross it and pay 29
// round trips a transaction; nothing is left on the hosts after the run, nor after
// `down --hosts`.
func sshTransport(t *testing.T, p *nstest.SSHPair, inv string, extra ...string) {
	t.Helper()
	before, _ := filepath.Glob("/tmp/wirelab-*")
	out := t.TempDir()
	const rtt = 10 * time.Millisecond
	args := append([]string{"study", "transport", "--hosts", inv, "--rtt", rtt.String(), "--threads", "1,4",
		"--duration", "3s", "--warmup", "1s", "--tables", "1", "--table-size", "1000", "--out", out}, extra...)
	start := time.Now()
	b, err := inClient(p, t.TempDir(), args...).CombinedOutput()
	t.Logf("study transport --hosts %s took %s", strings.Join(extra, " "), time.Since(start).Round(time.Second))
	if err != nil {
		t.Fatalf("study transport --hosts: %v\n%s", err, b)
	}
	run := readRun(t, out)
	got := map[string]result.Point{}
	for _, pt := range run.Points {
		name := fmt.Sprintf("%s threads=%d", pt.Transport, pt.Threads)
		got[name] = pt
		t.Logf("%s: %.1f TPS, latency avg %.1f ms, wire up %.0f B/s down %.0f B/s, CPU server %.2f client %.2f",
			name, pt.TPS, pt.LatAvgMs, pt.WireBytesPerSUp, pt.WireBytesPerSDown, pt.CPUServer, pt.CPUClient)
		// Both sides' CPU is seen where the load keeps them busy (the rows on the server
		// host, thousands of TPS). Across the 10 ms link one thread runs ~3 TPS: its
		// sysbench can use less than one 10 ms clock tick of CPU in a 3 s point, which
		// the agent reads as 0 (one CI run did), so there a reading is not required.
		busy := pt.TPS >= 100
		if pt.Failed || pt.TPS <= 0 || busy && (pt.CPUServer <= 0 || pt.CPUClient <= 0) {
			t.Errorf("%s: failed=%v (%s), TPS %.1f, CPU server %.2f client %.2f", name, pt.Failed, pt.FailReason,
				pt.TPS, pt.CPUServer, pt.CPUClient)
		}
	}
	// A transaction across the link waits 29 round trips; one on the server host none.
	slowest := float64(transportQueriesPerTxn) * float64(rtt) / float64(time.Millisecond)
	for _, path := range []string{"socket", "local-tcp", "remote-tcp", "remote-socket"} {
		for _, threads := range []int{1, 4} {
			name := fmt.Sprintf("%s threads=%d", path, threads)
			pt, ok := got[name]
			if !ok {
				t.Errorf("no %s row", name)
				continue
			}
			crosses := strings.HasPrefix(path, "remote-")
			wire := pt.WireBytesPerSUp + pt.WireBytesPerSDown
			switch {
			case crosses && (pt.WireBytesPerSUp <= 0 || pt.WireBytesPerSDown <= 0):
				t.Errorf("%s: wire %.0f/%.0f B/s: its traffic must cross the shaped link", name, pt.WireBytesPerSUp, pt.WireBytesPerSDown)
			case crosses && pt.LatAvgMs < 0.9*slowest:
				t.Errorf("%s: %.1f ms a transaction, want at least 29 round trips of %s (%.0f ms)", name, pt.LatAvgMs, rtt, slowest)
			case !crosses && wire > 1000:
				t.Errorf("%s: %.0f B/s on the shaped link: the server host's own paths must not cross it", name, wire)
			case !crosses && pt.LatAvgMs > slowest/10:
				t.Errorf("%s: %.1f ms a transaction: the server host's own paths must not pay the link's round trips", name, pt.LatAvgMs)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(out, "report.md")); err != nil {
		t.Errorf("no report: %v", err)
	}
	assertHostsClean(t, p, before)
	if b, err := inClient(p, t.TempDir(), "down", "--hosts", inv).CombinedOutput(); err != nil {
		t.Fatalf("down --hosts: %v\n%s", err, b)
	}
	assertHostsClean(t, p, before)
}

// TestSSHTransportKill9Down kills wirelab with SIGKILL while the remote-socket row runs:
// the socat hops on both hosts outlive it, and `wirelab down --hosts` must stop them with
// the rest.
func TestSSHTransportKill9Down(t *testing.T) {
	requireSocat(t)
	p, inv := sshHosts(t, "198.18.17.1", "198.18.17.2")
	before, _ := filepath.Glob("/tmp/wirelab-*")
	state := t.TempDir()
	t.Cleanup(func() { _ = inClient(p, state, "down", "--hosts", inv).Run() })
	r := startInClient(t, p, state, "study", "transport", "--hosts", inv, "--paths", "remote-socket", "--threads", "1",
		"--duration", "120s", "--warmup", "0s", "--tables", "1", "--table-size", "1000", "--deadman-ttl", "6s", "--out", t.TempDir())
	up := func() bool { return runsIn(p.NSA, "socat") && runsIn(p.NSB, "socat") && sysbenchRuns(p) }
	r.waitFor(t, up, func() string {
		return fmt.Sprintf("socat hops and load (client socat %v, server socat %v, sysbench %v)",
			runsIn(p.NSA, "socat"), runsIn(p.NSB, "socat"), sysbenchRuns(p))
	})
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = r.wait()
	if !runsIn(p.NSA, "socat") || !runsIn(p.NSB, "socat") {
		t.Fatalf("the socat hops did not outlive wirelab: nothing for down --hosts to do")
	}
	t.Logf("after SIGKILL the socat hops still run on both hosts; down --hosts must stop them")
	if b, err := inClient(p, state, "down", "--hosts", inv).CombinedOutput(); err != nil {
		t.Fatalf("down --hosts: %v\n%s", err, b)
	}
	// The dead-man switch removes the shaping within its TTL, counted from the last renewal.
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) && delayLineGone(p) != nil {
		time.Sleep(200 * time.Millisecond)
	}
	assertHostsClean(t, p, before)
}

func requireSocat(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("socat"); err != nil {
		nstest.Unavailable(t, "needs socat (make deps)")
	}
}

// runsIn reports whether a process named comm runs in network namespace ns.
func runsIn(ns, comm string) bool {
	out, _ := exec.Command("ip", "netns", "pids", ns).Output()
	for _, pid := range strings.Fields(string(out)) {
		if c, _ := os.ReadFile("/proc/" + pid + "/comm"); strings.TrimSpace(string(c)) == comm {
			return true
		}
	}
	return false
}
