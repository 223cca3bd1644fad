package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The sync study on two SSH hosts, as the replication study's pair: B (the server) runs
// the primary and sysbench beside it, A the replica, whose NIC is shaped toward B;
// wirelab runs in A's namespace and reaches both hosts over SSH only.

// syncArgs are `study sync --hosts inv` with MariaDB's async and semi-sync (after-sync)
// modes, a small pair (1 table of 1000 rows, a 128M buffer pool), 1 thread and short
// points, and args.
func syncArgs(inv string, args ...string) []string {
	return append([]string{"study", "sync", "--hosts", inv, "--modes", "async,semisync-after-sync", "--threads", "1",
		"--warmup", "1s", "--tables", "1", "--table-size", "1000", "--buffer-pool", "128M"}, args...)
}

// TestSSHSync sweeps RTTs 0 and 20 ms: every point's replica caught up with matching
// checksums and did not fall back; at 20 ms a semi-sync commit waits at least the round
// trip and async's does not; the replication stream crosses the replica's shaped classes,
// the primary's (with sysbench) and the replica's CPU are read; nothing is left on either
// host.
func TestSSHSync(t *testing.T) {
	p, inv := replicaHosts(t, "198.18.26.1", "198.18.26.2")
	before, _ := filepath.Glob("/tmp/wirelab-*")
	run := studyOnHosts(t, p, 4, "2 modes × 2 RTTs", syncArgs(inv, "--rtts", "0,20ms", "--duration", "4s")...)
	commit := map[string]float64{}
	for _, pt := range run.Points {
		ss := pt.Sync
		t.Logf("%s rtt %g ms: %.1f TPS, commit p50 %.2f p95 %.2f p99 %.2f ms, wire %.0f B/txn, semi-sync %s (%d synced, %d async commits), CPU primary+sysbench %.2f replica %.2f, checksums %v",
			pt.Series, ss.RTTMs, pt.TPS, ss.CommitP50Ms, ss.CommitP95Ms, ss.CommitP99Ms, ss.WireBytesPerTxn, ss.Replica, ss.SyncedTx, ss.AsyncTx,
			pt.CPUServer, pt.CPUClient, ss.ChecksumOK)
		switch {
		case pt.Failed || !ss.ChecksumOK || ss.FellBack:
			t.Errorf("%s at %g ms: failed=%v (%s), checksums match %v, fell back %v", pt.Series, ss.RTTMs, pt.Failed, pt.FailReason, ss.ChecksumOK, ss.FellBack)
		case pt.TPS <= 0 || ss.WireBytesPerTxn <= 0:
			t.Errorf("%s at %g ms: %.1f TPS, %.0f wire B/txn: the load must run and its log cross the shaped link", pt.Series, ss.RTTMs, pt.TPS, ss.WireBytesPerTxn)
		case pt.CPUServer <= 0 || pt.CPUClient <= 0:
			t.Errorf("%s at %g ms: CPU primary %.2f, replica %.2f: an agent's counters are missing", pt.Series, ss.RTTMs, pt.CPUServer, pt.CPUClient)
		case pt.Series == "semisync-after-sync" && (ss.Replica != "ON" || ss.SyncedTx <= 0 || ss.AsyncTx != 0):
			t.Errorf("semi-sync at %g ms: status %s, %d synced, %d async commits: every commit must wait for the replica", ss.RTTMs, ss.Replica, ss.SyncedTx, ss.AsyncTx)
		}
		if ss.RTTMs == 20 {
			commit[pt.Series] = ss.CommitP50Ms
		}
	}
	if c := commit["semisync-after-sync"]; c < 20 {
		t.Errorf("semi-sync commit p50 %.2f ms at 20 ms RTT: want at least the round trip", c)
	}
	if c := commit["async"]; c <= 0 || c > 10 {
		t.Errorf("async commit p50 %.2f ms at 20 ms RTT: want far below the round trip (the control waits for no replica)", c)
	}
	assertHostsClean(t, p, before)
}

// TestSSHSyncKill9Down kills wirelab with SIGKILL during the semi-sync point: both
// MariaDBs (the primary with semi-sync on) and the replica's shaping outlive it, and
// `wirelab down --hosts` must leave nothing on either host.
func TestSSHSyncKill9Down(t *testing.T) {
	p, inv := replicaHosts(t, "198.18.27.1", "198.18.27.2")
	before, _ := filepath.Glob("/tmp/wirelab-*")
	state := t.TempDir()
	t.Cleanup(func() { _ = inClient(p, state, "down", "--hosts", inv).Run() })
	// async, the control, comes first; the semi-sync point after it.
	r := startInClient(t, p, state, syncArgs(inv, "--rtts", "20ms", "--duration", "10s", "--deadman-ttl", "6s", "--out", t.TempDir())...)
	r.waitFor(t, func() bool { return semiSyncOn() && runsIn(p.NSB, "sysbench") }, func() string {
		return "the semi-sync point's load beside the primary"
	})
	time.Sleep(time.Second)
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = r.wait()
	if !runsIn(p.NSA, "mariadbd") || !runsIn(p.NSB, "mariadbd") || !semiSyncOn() {
		t.Fatalf("both servers, the primary in semi-sync, did not outlive wirelab: nothing for down --hosts to do")
	}
	downLeavesNothing(t, p, state, inv, before)
}

// semiSyncOn reports whether a MariaDB in a wirelab directory (both hosts share this
// machine's /tmp) is a primary with semi-sync on, asked as root over its socket.
func semiSyncOn() bool {
	socks, _ := filepath.Glob("/tmp/wirelab-*/mariadb/mysqld.sock")
	for _, s := range socks {
		out, err := exec.Command("mariadb", "--no-defaults", "--socket="+s, "--user=root", "--batch", "--skip-column-names",
			"--execute=SELECT @@GLOBAL.rpl_semi_sync_master_enabled").Output()
		if err == nil && strings.TrimSpace(string(out)) == "1" {
			return true
		}
	}
	return false
}

// TestSSHSyncCtrlC sends one Ctrl-C during the semi-sync point: wirelab finishes that
// point (its replica checked), keeps both finished points, and tears down everything on
// both hosts, the primary in semi-sync included.
func TestSSHSyncCtrlC(t *testing.T) {
	p, inv := replicaHosts(t, "198.18.28.1", "198.18.28.2")
	before, _ := filepath.Glob("/tmp/wirelab-*")
	state, out := t.TempDir(), t.TempDir()
	t.Cleanup(func() { _ = inClient(p, state, "down", "--hosts", inv).Run() })
	r := startInClient(t, p, state, syncArgs(inv, "--rtts", "20ms", "--duration", "5s", "--out", out)...)
	r.waitFor(t, func() bool { return semiSyncOn() && runsIn(p.NSB, "sysbench") }, func() string {
		return "the semi-sync point's load beside the primary"
	})
	start := time.Now()
	_ = r.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-r.exited:
		r.ended = true
	case <-time.After(time.Minute):
		t.Fatalf("study sync --hosts did not stop within a minute of Ctrl-C:\n%s", r.log)
	}
	t.Logf("the point finished and torn down %s after Ctrl-C", time.Since(start).Round(100*time.Millisecond))
	run := readRun(t, out)
	if !run.Interrupted || len(run.Points) != 2 {
		t.Fatalf("interrupted=%v with %d points; want async's and the semi-sync point finished and kept, no more", run.Interrupted, len(run.Points))
	}
	for _, pt := range run.Points {
		if pt.Failed || pt.Sync == nil || !pt.Sync.ChecksumOK {
			t.Errorf("%s: failed=%v (%s), checksums %v", pt.Series, pt.Failed, pt.FailReason, pt.Sync != nil && pt.Sync.ChecksumOK)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) && runsIn(p.NSB, "sysbench") {
		time.Sleep(200 * time.Millisecond)
	}
	assertHostsClean(t, p, before)
}
