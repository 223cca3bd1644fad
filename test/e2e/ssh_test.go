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

// The SSH tests run wirelab between two real hosts: network namespaces with Debian's
// sshd each (nstest.SSHPair), joined by a veth pair of their own. wirelab itself runs in
// the client's namespace, as it would on the client machine, and reaches both hosts over
// SSH only; the server's MariaDB is started through SSH.

// sshHosts builds the pair and writes its inventory (A the client, B the server); it
// returns the pair and the file.
func sshHosts(t testing.TB, addrA, addrB string) (*nstest.SSHPair, string) {
	return sshInventory(t, addrA, addrB, `  - name: app
    role: client
    address: %[1]s
    nic: eth0
  - name: db
    role: server
    address: %[2]s
    server:
      start: mariadb
`)
}

// sshInventory builds the pair and writes an inventory of it whose hosts are hostsFmt
// (%[1]s is A's address, %[2]s B's); it returns the pair and the file.
func sshInventory(t testing.TB, addrA, addrB, hostsFmt string) (*nstest.SSHPair, string) {
	t.Helper()
	skipUnlessRoot(t)
	nstest.SkipUnlessSSHD(t)
	p := nstest.NewSSHPair(t, addrA, addrB)
	inv := fmt.Sprintf("known_hosts: %s\ndefaults:\n  user: root\n  port: 22\n  key: %s\nhosts:\n", p.KnownHosts, p.Key) +
		fmt.Sprintf(hostsFmt, addrA, addrB)
	file := filepath.Join(p.Dir, "hosts.yaml")
	if err := os.WriteFile(file, []byte(inv), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, file
}

// inClient is wirelab run inside the client host's namespace.
func inClient(p *nstest.SSHPair, stateDir string, args ...string) *exec.Cmd {
	cmd := exec.Command("ip", append([]string{"netns", "exec", p.NSA, bin}, args...)...)
	cmd.Env = append(os.Environ(), "WIRELAB_STATE_DIR="+stateDir)
	return cmd
}

// assertHostsClean fails unless the client's NIC is unshaped, its IFB and delay line gone, no wirelab
// directory is left on the hosts (they share this machine's /tmp) and nothing of
// wirelab's runs in either namespace (sshd, which the pair started, may, and the
// processes named in theirs, which the test started).
func assertHostsClean(t *testing.T, p *nstest.SSHPair, before []string, theirs ...string) {
	t.Helper()
	assertClean(t, []clientNIC{{p.NSA, "eth0"}}, []string{p.NSA, p.NSB}, before, theirs...)
}

// clientNIC is a client host's namespace and the NIC wirelab shapes there.
type clientNIC struct{ ns, nic string }

// assertClean is assertHostsClean for any hosts: every client's NIC unshaped, its IFB
// and delay line gone; no wirelab directory left; nothing of wirelab's running in any
// of the namespaces all (sshd and the processes named in theirs may).
func assertClean(t *testing.T, clients []clientNIC, all []string, before []string, theirs ...string) {
	t.Helper()
	for _, c := range clients {
		q, _ := exec.Command("ip", "netns", "exec", c.ns, "tc", "qdisc", "show", "dev", c.nic).CombinedOutput()
		if strings.Contains(string(q), "htb") || strings.Contains(string(q), "ingress") {
			t.Errorf("%s: the client's NIC %s is still shaped: %s", c.ns, c.nic, q)
		}
		if exec.Command("ip", "-n", c.ns, "link", "show", "dev", "wlifb-"+c.nic).Run() == nil {
			t.Errorf("%s: the client's IFB wlifb-%s is still there", c.ns, c.nic)
		}
		if err := delayLineGoneIn(c.ns); err != nil {
			t.Errorf("%s: the client's delay line: %v", c.ns, err)
		}
	}
	dirs, _ := filepath.Glob("/tmp/wirelab-*")
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "wirelab-run")); err == nil && !contains(before, d) {
			t.Errorf("wirelab directory %s left on a host", d)
		}
	}
	for _, ns := range all {
		out, _ := exec.Command("ip", "netns", "pids", ns).Output()
		for _, pid := range strings.Fields(string(out)) {
			comm, _ := os.ReadFile("/proc/" + pid + "/comm")
			c := strings.TrimSpace(string(comm))
			st, _ := os.ReadFile("/proc/" + pid + "/stat")
			if c == "" || c == "sshd" || contains(theirs, c) || strings.Contains(string(st), ") Z ") {
				continue
			}
			t.Errorf("process %s (%s) still runs in %s", pid, c, ns)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestSSHBandwidthQuick runs the quick bandwidth study (at 1 and 16 threads: every
// experiment and link, in a third of the time) between the two SSH hosts and
// checks the run is what the lab writes: every point measured, wire bytes and both sides'
// CPU seen, the 20 mbit link full from 16 threads on, and nothing left on the hosts.
func TestSSHBandwidthQuick(t *testing.T) {
	p, inv := sshHosts(t, "198.18.12.1", "198.18.12.2")
	before, _ := filepath.Glob("/tmp/wirelab-*")
	state, out := t.TempDir(), t.TempDir()
	cmd := inClient(p, state, "study", "bandwidth", "--hosts", inv, "--quick", "--threads", "1,16", "--out", out)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("study bandwidth --hosts: %v\n%s", err, b)
	}
	run := readRun(t, out)
	if len(run.Points) != 12 {
		t.Errorf("%d points, want 12 (n1, n2, n3 on two links, 2 thread counts)", len(run.Points))
	}
	for _, pt := range run.Points {
		name := fmt.Sprintf("%s threads=%d", pt.Series, pt.Threads)
		t.Logf("%s: TPS %.1f, link %.0f%%, load began %.2f s after the sampler, CPU server %.2f client %.2f, bottleneck %s (%s)",
			name, pt.TPS, 100*pt.LinkUtilization, pt.LoadLeadS, pt.CPUServer, pt.CPUClient, pt.Bottleneck, pt.BottleneckWhy)
		if pt.Failed || pt.TPS <= 0 {
			t.Errorf("%s: failed=%v (%s), TPS %.1f", name, pt.Failed, pt.FailReason, pt.TPS)
			continue
		}
		if pt.WireBytesPerSDown <= 0 || pt.WireBytesPerSUp <= 0 || pt.CPUServer <= 0 || pt.CPUClient <= 0 {
			t.Errorf("%s: wire %.0f/%.0f B/s, CPU server %.2f client %.2f: an agent's counters are missing",
				name, pt.WireBytesPerSUp, pt.WireBytesPerSDown, pt.CPUServer, pt.CPUClient)
		}
		if pt.LinkRateBps == 20_000_000 && pt.Threads >= 16 && pt.LinkUtilization < 0.8 {
			t.Errorf("%s: link %.0f%% used, want the 20 mbit link full", name, 100*pt.LinkUtilization)
		}
	}
	if s := run.Environment.Server; s == nil || s.Engine != "mariadb" || s.Version == "" {
		t.Errorf("environment.server = %+v, want the remote MariaDB's facts", s)
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Errorf("no report: %v", err)
	}
	assertHostsClean(t, p, before)
}

// TestSSHKill9DeadmanAndDown kills wirelab with SIGKILL in the middle of a delayed run on
// the SSH hosts: the client's shaping, the delay line's rules and its delayer included,
// must be gone within the dead-man switch's TTL without any help, and `wirelab down
// --hosts` must remove the rest (the server, the directories).
func TestSSHKill9DeadmanAndDown(t *testing.T) {
	p, inv := sshHosts(t, "198.18.13.1", "198.18.13.2")
	before, _ := filepath.Glob("/tmp/wirelab-*")
	state, out := t.TempDir(), t.TempDir()
	const ttl = 6 * time.Second
	// Cleanups run last first: wirelab is killed (startInClient's) before this down.
	t.Cleanup(func() { _ = inClient(p, state, "down", "--hosts", inv).Run() })
	r := startInClient(t, p, state, "run", "--hosts", inv, "--rate", "20mbit", "--rtt", "20ms", "--threads", "4", "--duration", "120s",
		"--tables", "1", "--table-size", "10000", "--deadman-ttl", ttl.String(), "--out", out)
	shaped := func() bool {
		q, _ := exec.Command("ip", "netns", "exec", p.NSA, "tc", "qdisc", "show", "dev", "eth0").Output()
		return strings.Contains(string(q), "htb")
	}
	r.waitFor(t, func() bool { return shaped() && delayLineUp(p) && sysbenchRuns(p) }, func() string {
		return fmt.Sprintf("shaped load (shaped %v, delay line %v, sysbench %v)", shaped(), delayLineUp(p), sysbenchRuns(p))
	})
	time.Sleep(2 * time.Second)
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = r.wait()
	start := time.Now()
	// The switch polls every TTL/10 and undoes once the renewal is older than the TTL,
	// counted from the last renewal (at most TTL/3 before the kill).
	for shaped() || delayLineGone(p) != nil {
		if time.Since(start) > ttl+3*time.Second {
			t.Fatalf("the client's NIC is still shaped %s after SIGKILL (TTL %s): tc %v, delay line: %v",
				time.Since(start).Round(time.Second), ttl, shaped(), delayLineGone(p))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("shaping and delay line removed by the dead-man switch %s after SIGKILL (TTL %s)", time.Since(start).Round(100*time.Millisecond), ttl)
	if b, err := inClient(p, state, "down", "--hosts", inv).CombinedOutput(); err != nil {
		t.Fatalf("down --hosts: %v\n%s", err, b)
	}
	// sysbench ends when its SSH session is gone (its output pipe closes) or at its
	// --time; down does not chase it: give it the time a broken pipe takes.
	deadline := time.Now().Add(15 * time.Second)
	for sysbenchRuns(p) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	assertHostsClean(t, p, before)
}
