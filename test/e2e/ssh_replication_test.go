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

// The replication study on two SSH hosts: B (the pair's server side) runs the source,
// A the replica, whose NIC is the one shaped; wirelab runs in A's namespace, as it would
// on the replica machine, and reaches both hosts over SSH only.

// replicaHosts builds the pair and writes study replication's inventory: B the server,
// A the replica, no client.
func replicaHosts(t testing.TB, addrA, addrB string) (*nstest.SSHPair, string) {
	return sshInventory(t, addrA, addrB, `  - name: db
    role: server
    address: %[2]s
    server:
      start: mariadb
  - name: rep
    role: replica
    address: %[1]s
    nic: eth0
    server:
      start: mariadb
`)
}

// TestSSHReplication runs scenario 3 (wire bytes by load) and 4 (the wire dropped for 3 s
// mid-load) over the three channels between the two hosts: every point's replica caught
// up with matching checksums, its replication stream seen on the replica's shaped
// classes, both servers' CPU read, the lag of a fault point past the drop, the tunnel's
// stream smaller than the native one at the same load, and nothing left on either host.
func TestSSHReplication(t *testing.T) {
	p, inv := replicaHosts(t, "198.18.18.1", "198.18.18.2")
	before, _ := filepath.Glob("/tmp/wirelab-*")
	run := studyOnHosts(t, p, 6, "scenarios 3 and 4 on each channel",
		replicationArgs(inv, "--scenarios", "3,4", "--loads", "600", "--qps", "600", "--duration", "10s")...)
	down := map[string]int64{}
	for _, pt := range run.Points {
		rs := pt.Replication
		t.Logf("%s %s: %.0f QPS, wire down %d B (%.0f B/txn), up %d B, binlog %d B, lag max %.2f s, CPU source %.2f replica %.2f, checksums %v",
			pt.Series, pt.Channel, pt.QPS, rs.WireDownBytesTotal, rs.WireBytesPerTxn, rs.WireUpBytesTotal, rs.BinlogBytes, rs.LagMaxS, pt.CPUServer, pt.CPUClient, rs.ChecksumOK)
		switch {
		case pt.Failed || !rs.ChecksumOK:
			t.Errorf("%s: failed=%v (%s), checksums match %v", pt.Channel, pt.Failed, pt.FailReason, rs.ChecksumOK)
		case pt.QPS < 500:
			t.Errorf("%s: %.0f QPS, want the 600 asked for", pt.Channel, pt.QPS)
		case rs.WireDownBytesTotal <= 0 || rs.WireUpBytesTotal <= 0:
			t.Errorf("%s: wire %d B down, %d B up: the replication stream must cross the shaped link", pt.Channel, rs.WireDownBytesTotal, rs.WireUpBytesTotal)
		case rs.BinlogBytes <= 0 || rs.LagSamples == 0:
			t.Errorf("%s: binlog %d B, %d lag readings: the source's binlog and the heartbeat must be read", pt.Channel, rs.BinlogBytes, rs.LagSamples)
		case pt.CPUServer <= 0 || pt.CPUClient <= 0:
			t.Errorf("%s: CPU source %.2f, replica %.2f: an agent's counters are missing", pt.Channel, pt.CPUServer, pt.CPUClient)
		}
		if pt.Series == "fault" {
			// The replica hears nothing for the drop's 3 s: its lag passes 2 s.
			if rs.LagMaxS < 2 {
				t.Errorf("fault %s: lag max %.2f s: the wire was not dropped for 3 s", pt.Channel, rs.LagMaxS)
			}
			continue
		}
		down[pt.Channel] = rs.WireDownBytesTotal
	}
	if n, tun := down["native"], down["tunnel"]; n <= 0 || tun <= 0 || float64(tun)/float64(n) >= 1 {
		t.Errorf("wire bytes tunnel %d ÷ native %d: want < 1 at the same load (zstd over grouped events)", tun, n)
	} else {
		t.Logf("tunnel ÷ native wire bytes: %.2f; native-compressed ÷ native: %.2f", float64(tun)/float64(n), float64(down["native-compressed"])/float64(n))
	}
	assertHostsClean(t, p, before)
}

// TestSSHReplicationKill9Down kills wirelab with SIGKILL while the tunnel channel's load
// runs with the wire dropped (scenario 4): the dead-man switch must lift the drop within
// its TTL; both MariaDBs, the tunnel's ends on both hosts and the replica's shaping
// outlive wirelab, and `wirelab down --hosts` must leave nothing.
func TestSSHReplicationKill9Down(t *testing.T) {
	p, inv := replicaHosts(t, "198.18.19.1", "198.18.19.2")
	before, _ := filepath.Glob("/tmp/wirelab-*")
	state := t.TempDir()
	t.Cleanup(func() { _ = inClient(p, state, "down", "--hosts", inv).Run() })
	r := startInClient(t, p, state, replicationArgs(inv, "--channels", "tunnel", "--scenarios", "4", "--qps", "300",
		"--duration", "120s", "--fault-at", "1s", "--fault-for", "100s", "--deadman-ttl", "6s", "--out", t.TempDir())...)
	up := func() bool {
		return tunnelRuns(p.NSA, "entry") && tunnelRuns(p.NSB, "exit") && runsIn(p.NSB, "sysbench") &&
			runsIn(p.NSA, "mariadbd") && runsIn(p.NSB, "mariadbd") && faultUp(p)
	}
	r.waitFor(t, up, func() string {
		return fmt.Sprintf("the tunnel's load with the wire dropped (entry %v, exit %v, sysbench %v, replica %v, source %v, drop %v)",
			tunnelRuns(p.NSA, "entry"), tunnelRuns(p.NSB, "exit"), runsIn(p.NSB, "sysbench"), runsIn(p.NSA, "mariadbd"),
			runsIn(p.NSB, "mariadbd"), faultUp(p))
	})
	time.Sleep(2 * time.Second)
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = r.wait()
	start := time.Now()
	for faultUp(p) {
		if time.Since(start) > 6*time.Second+3*time.Second {
			t.Fatalf("the replica host still drops the wire %s after SIGKILL (TTL 6s)", time.Since(start).Round(time.Second))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("the drop lifted by the dead-man switch %s after SIGKILL", time.Since(start).Round(100*time.Millisecond))
	if !tunnelRuns(p.NSA, "entry") || !tunnelRuns(p.NSB, "exit") || !runsIn(p.NSA, "mariadbd") || !runsIn(p.NSB, "mariadbd") {
		t.Fatalf("the tunnel's ends and both servers did not outlive wirelab: nothing for down --hosts to do")
	}
	t.Logf("after SIGKILL both MariaDBs and the tunnel's ends still run; down --hosts must stop them")
	downLeavesNothing(t, p, state, inv, before)
	if faultUp(p) {
		t.Errorf("the replica host still drops the wire after down --hosts")
	}
}

// downLeavesNothing runs `wirelab down --hosts inv` after a kill -9 and fails the test
// unless nothing of wirelab's is left on either host (before: the wirelab directories
// there were before the test).
func downLeavesNothing(t *testing.T, p *nstest.SSHPair, state, inv string, before []string) {
	t.Helper()
	start := time.Now()
	if b, err := inClient(p, state, "down", "--hosts", inv).CombinedOutput(); err != nil {
		t.Fatalf("down --hosts: %v\n%s", err, b)
	}
	t.Logf("down --hosts after SIGKILL: %s", time.Since(start).Round(100*time.Millisecond))
	// sysbench ends when its SSH session is gone (its output pipe closes); the dead-man
	// switch removes the delay line within its TTL, counted from the last renewal.
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) && (delayLineGone(p) != nil || runsIn(p.NSB, "sysbench")) {
		time.Sleep(200 * time.Millisecond)
	}
	assertHostsClean(t, p, before)
}

// faultUp reports whether the replica host (A) has the wire fault's chain.
func faultUp(p *nstest.SSHPair) bool {
	return exec.Command("ip", "netns", "exec", p.NSA, "iptables", "-w", "-S", "WIRELAB-FAULT").Run() == nil
}

// studyOnHosts runs the study args name (`study NAME ...`) in the client's namespace with
// --out a new directory, logs how long it took and returns its results, failing the test
// unless it ends well with want points (what they are: why).
func studyOnHosts(t *testing.T, p *nstest.SSHPair, want int, why string, args ...string) result.Run {
	t.Helper()
	out := t.TempDir()
	start := time.Now()
	b, err := inClient(p, t.TempDir(), append(args, "--out", out)...).CombinedOutput()
	name := strings.Join(args[:2], " ") + " --hosts"
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, b)
	}
	t.Logf("%s: %s", name, time.Since(start).Round(time.Second))
	run := readRun(t, out)
	if len(run.Points) != want {
		t.Fatalf("%d points, want %d (%s)\n%s", len(run.Points), want, why, b)
	}
	return run
}

// replicationArgs are `study replication --hosts inv` with a small, quick pair (1 table
// of 1000 rows, a 128M buffer pool, 20 ms RTT) and args.
func replicationArgs(inv string, args ...string) []string {
	return append([]string{"study", "replication", "--hosts", inv, "--rtt", "20ms", "--tables", "1", "--table-size", "1000",
		"--buffer-pool", "128M"}, args...)
}

// tunnelRuns reports whether a `wirelab tunnel <role>` runs in network namespace ns.
func tunnelRuns(ns, role string) bool {
	out, _ := exec.Command("ip", "netns", "pids", ns).Output()
	for _, pid := range strings.Fields(string(out)) {
		cmd, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		if strings.Contains(strings.ReplaceAll(string(cmd), "\x00", " "), " tunnel "+role+" ") {
			return true
		}
	}
	return false
}

// TestSSHReplicationCtrlC sends two Ctrl-C while the tunnel channel's load runs: wirelab
// tears down at once, and nothing is left on either host (both MariaDBs, the tunnel's
// ends, the shaping, the directories).
func TestSSHReplicationCtrlC(t *testing.T) {
	p, inv := replicaHosts(t, "198.18.20.1", "198.18.20.2")
	before, _ := filepath.Glob("/tmp/wirelab-*")
	state := t.TempDir()
	t.Cleanup(func() { _ = inClient(p, state, "down", "--hosts", inv).Run() })
	r := startInClient(t, p, state, replicationArgs(inv, "--channels", "tunnel", "--scenarios", "3", "--loads", "300",
		"--duration", "120s", "--out", t.TempDir())...)
	r.waitFor(t, func() bool { return tunnelRuns(p.NSA, "entry") && runsIn(p.NSB, "sysbench") }, func() string {
		return fmt.Sprintf("the tunnel's load (entry %v, sysbench %v)", tunnelRuns(p.NSA, "entry"), runsIn(p.NSB, "sysbench"))
	})
	start := time.Now()
	_ = r.cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(200 * time.Millisecond)
	_ = r.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-r.exited:
		r.ended = true
	case <-time.After(2 * time.Minute):
		t.Fatalf("study replication --hosts did not stop within 2 minutes of a second Ctrl-C:\n%s", r.log)
	}
	t.Logf("torn down %s after two Ctrl-C", time.Since(start).Round(100*time.Millisecond))
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) && runsIn(p.NSB, "sysbench") {
		time.Sleep(200 * time.Millisecond)
	}
	assertHostsClean(t, p, before)
}
