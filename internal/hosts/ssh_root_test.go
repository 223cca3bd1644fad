package hosts

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/nstest"
)

func TestSSHHostsInNamespaces(t *testing.T) {
	skipUnlessSSHRoot(t)
	n := newSSHNet(t)
	ctx := context.Background()
	b := n.dial(t, "server1", addrB)

	out, err := b.Run(ctx, "ip", "-br", "addr", "show", "dev", "eth0")
	if err != nil || !strings.Contains(string(out), addrB+"/24") {
		t.Fatalf("the command ran elsewhere than host B: %q, %v", out, err)
	}
	dst := filepath.Join(n.dir, "copied.bin")
	payload := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	if err := b.Copy(ctx, strings.NewReader(payload), dst, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := b.ReadFile(ctx, dst); err != nil || string(got) != payload {
		t.Fatalf("read back %d bytes, %v", len(got), err)
	}
	stat, err := b.ReadFile(ctx, "/proc/stat")
	if err != nil || !strings.HasPrefix(string(stat), "cpu ") {
		t.Fatalf("/proc/stat: %.40q, %v", stat, err)
	}
	// /proc/net/dev is per namespace: B's eth0 is there.
	if dev, err := b.ReadFile(ctx, "/proc/net/dev"); err != nil || !strings.Contains(string(dev), "eth0:") {
		t.Fatalf("/proc/net/dev: %v", err)
	}
	p, err := b.Start(ctx, "sleeper", []string{"sh", "-c", "sleep 60 & sleep 60; wait"}, filepath.Join(n.dir, "sleeper.log"))
	if err != nil {
		t.Fatal(err)
	}
	pids := func() string {
		return " " + strings.Join(strings.Fields(mustRun(t, "ip", "netns", "pids", n.nsB)), " ") + " "
	}
	if !strings.Contains(pids(), " "+strconv.Itoa(p.Pid())+" ") {
		t.Fatalf("started pid %d is not in B (%s)", p.Pid(), pids())
	}
	if err := p.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	// Only B's processes: pgrep would see every process on the machine, whatever its
	// network namespace.
	for _, pid := range strings.Fields(pids()) {
		cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		if strings.Contains(strings.ReplaceAll(string(cmdline), "\x00", " "), "sleep 60") {
			t.Errorf("after Stop, %q still runs in B: pid %s", "sleep 60", pid)
		}
	}
	t.Logf("B ran a command, took a 1 MiB copy, served /proc/stat and /proc/net/dev, started and stopped pid %d", p.Pid())
}

// tcStats returns the packets that went through class 1:1 of dev and HTB's direct queue,
// from `tc -s` text (tc's JSON for HTB classes is not reliable across iproute2 versions).
func tcStats(t *testing.T, ns, dev string) (class, direct int) {
	t.Helper()
	classes := strings.Split(mustRun(t, "ip", "netns", "exec", ns, "tc", "-s", "class", "show", "dev", dev), "\n")
	for i, l := range classes {
		if strings.HasPrefix(l, "class htb 1:1 ") && i+1 < len(classes) {
			// " Sent 1960 bytes 20 pkt (dropped 0, ...)"
			if f := strings.Fields(classes[i+1]); len(f) > 4 && f[0] == "Sent" {
				class, _ = strconv.Atoi(f[3])
			}
		}
	}
	if m := directRe.FindStringSubmatch(mustRun(t, "ip", "netns", "exec", ns, "tc", "-s", "qdisc", "show", "dev", dev)); m != nil {
		direct, _ = strconv.Atoi(m[1])
	}
	return class, direct
}

var directRe = regexp.MustCompile(`direct_packets_stat (\d+)`)

func (n *sshNet) remoteLink(h Host, agent string, ttl time.Duration) *RemoteLink {
	return &RemoteLink{Host: h, Agent: agent, Dir: n.dir, TTL: ttl, Run: "r1",
		Target: ShapeTarget{Host: h.Name(), NIC: "eth0", Peer: netip.MustParseAddr(addrB), KeepPorts: []uint16{22}}}
}

func TestSSHShapeOnlyTowardServer(t *testing.T) {
	skipUnlessSSHRoot(t)
	agent := nstest.WirelabBinary(t)
	n := newSSHNet(t)
	ctx := context.Background()
	a, b := n.dial(t, "client1", addrA), n.dial(t, "server1", addrB)
	// The agent reaches A as a remote host gets it: copied over SSH.
	remoteAgent := filepath.Join(n.dir, "wirelab-agent")
	f, err := os.Open(agent)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := a.Copy(ctx, f, remoteAgent, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CheckNIC(ctx, a, "eth0"); err != nil {
		t.Fatal(err)
	}
	l := n.remoteLink(a, remoteAgent, 10*time.Second)
	t.Cleanup(func() { _ = l.Clear(context.Background()) })
	t0 := time.Now()
	phase := func(what string) { t.Logf("%6.2fs %s", time.Since(t0).Seconds(), what) }
	if err := l.Shape(ctx, link.Condition{RateBps: 5_000_000}); err != nil {
		t.Fatal(err)
	}
	// 20 connection attempts to a closed port: a SYN out and a RST back each (no ping on
	// this machine; bash's /dev/tcp is everywhere bash is).
	ping := func(dst string) {
		t.Helper()
		script := "for i in $(seq 20); do (echo > /dev/tcp/" + dst + "/9) 2>/dev/null; done; true"
		if out, err := a.Run(ctx, "bash", "-c", script); err != nil {
			t.Fatalf("probe %s: %v: %s", dst, err, out)
		}
	}
	c0, d0 := tcStats(t, n.nsA, "eth0")
	i0, _ := tcStats(t, n.nsA, IFBName("eth0"))
	for i := 0; i < 5; i++ { // the SSH control connection to B crosses eth0
		if _, err := b.Run(ctx, "true"); err != nil {
			t.Fatal(err)
		}
	}
	c1, d1 := tcStats(t, n.nsA, "eth0")
	i1, _ := tcStats(t, n.nsA, IFBName("eth0"))
	if c1 != c0 || i1 != i0 || d1 <= d0 {
		t.Errorf("SSH to the server: shaped class %d→%d, IFB class %d→%d, direct %d→%d; want only direct to grow", c0, c1, i0, i1, d0, d1)
	}
	ping(addrB2)
	c2, d2 := tcStats(t, n.nsA, "eth0")
	i2, _ := tcStats(t, n.nsA, IFBName("eth0"))
	if c2 != c1 || i2 != i1 || d2 < d1+20 {
		t.Errorf("20 SYNs to %s (not the server): shaped class %d→%d, IFB %d→%d, direct %d→%d; want 20 more direct only", addrB2, c1, c2, i1, i2, d1, d2)
	}
	ping(addrB)
	c3, d3 := tcStats(t, n.nsA, "eth0")
	i3, _ := tcStats(t, n.nsA, IFBName("eth0"))
	// The SSH session may add an ACK or two to the direct class meanwhile; the 20 SYNs must not.
	if c3 < c2+20 || i3 < i2+20 || d3 > d2+3 {
		t.Errorf("20 SYNs to the server: shaped class %d→%d, IFB (replies) %d→%d, direct %d→%d; want 20 more in both classes, none of them direct", c2, c3, i2, i3, d2, d3)
	}
	t.Logf("eth0 class 1:1 %d packets, direct %d; IFB class 1:1 %d (SSH ×5 direct only, 20 SYNs to %s direct, 20 to %s shaped, and their RSTs through the IFB)", c3, d3, i3, addrB2, addrB)
	phase("shaped and probed")
	if err := l.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if shaped(t, n.nsA) {
		t.Errorf("after Clear:\n%s", qdiscs(t, n.nsA))
	}

	// A wirelab that stops renewing (as if killed) and a new one shaping within the TTL:
	// the new one retires the old switch, whose TTL then passes without undoing anything.
	old := n.remoteLink(a, remoteAgent, 2*time.Second)
	old.Dir, old.Run = t.TempDir(), "r-old" // each wirelab stages a directory of its own
	phase("cleared")
	if err := old.Shape(ctx, link.Condition{RateBps: 5_000_000}); err != nil {
		t.Fatal(err)
	}
	old.mu.Lock()
	old.stopRenewing()
	old.mu.Unlock()
	again := n.remoteLink(a, remoteAgent, 10*time.Second)
	var warned bytes.Buffer
	again.Dir, again.Run, again.Log = t.TempDir(), "r-again", slog.New(slog.NewTextHandler(&warned, nil))
	t.Cleanup(func() { _ = again.Clear(context.Background()) })
	if err := again.Shape(ctx, link.Condition{RateBps: 5_000_000}); err != nil {
		t.Fatal(err)
	}
	// The old switch was still running (its TTL had not passed): retiring it is said.
	oldPid := strconv.Itoa(old.deadman.Pid())
	if w := warned.String(); !strings.Contains(w, "level=WARN") || !strings.Contains(w, "pid "+oldPid+" (/run/wirelab-deadman/client1@eth0/r-old.pid)") {
		t.Errorf("retiring the old run's live switch (pid %s) was not reported: %q", oldPid, w)
	}
	phase("the new wirelab shaped, the old switch retired")
	time.Sleep(3 * time.Second)
	if !shaped(t, n.nsA) {
		t.Errorf("the old switch undid the new wirelab's shaping")
	}
	if err := again.Clear(ctx); err != nil || shaped(t, n.nsA) {
		t.Errorf("Clear: %v", err)
	}
	phase("cleared again")
}

// helperEnv carries what the SIGKILL helper needs to shape A and keep renewing.
type helperEnv struct {
	NS, Key, KnownHosts, Agent, Dir string
	TTL                             time.Duration
}

// TestMain runs the package's tests, or, in the child process TestSSHDeadmanAfterSIGKILL
// starts (with WIRELAB_SSH_HELPER set), only shapeAndRenew: the wirelab process it kills.
// A child is not a test, so it neither passes nor skips one.
func TestMain(m *testing.M) {
	if raw := os.Getenv("WIRELAB_SSH_HELPER"); raw != "" {
		if err := shapeAndRenew(raw); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// shapeAndRenew shapes a link through the dead-man switch, says so, and renews it until
// it is killed.
func shapeAndRenew(raw string) error {
	var e helperEnv
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		return err
	}
	n := &sshNet{nsA: e.NS, key: e.Key, knownHosts: e.KnownHosts, dir: e.Dir}
	a, err := DialSSH(context.Background(), n.cfg("client1", addrA))
	if err != nil {
		return err
	}
	if err := n.remoteLink(a, e.Agent, e.TTL).Shape(context.Background(), link.Condition{RateBps: 5_000_000}); err != nil {
		return err
	}
	os.Stdout.WriteString("SHAPED\n")
	time.Sleep(time.Minute) // renewing, until the SIGKILL
	return nil
}

func TestSSHDeadmanAfterSIGKILL(t *testing.T) {
	skipUnlessSSHRoot(t)
	agent := nstest.WirelabBinary(t)
	n := newSSHNet(t)
	n.dial(t, "client1", addrA) // sshd is up
	const ttl = 2 * time.Second
	env, _ := json.Marshal(helperEnv{NS: n.nsA, Key: n.key, KnownHosts: n.knownHosts, Agent: agent, Dir: n.dir, TTL: ttl})
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "WIRELAB_SSH_HELPER="+string(env))
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "SHAPED" {
				ready <- true
			} else {
				fmt.Fprintln(os.Stderr, "helper:", sc.Text()) // not t.Log: this may outlive the test
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("the helper exited before shaping")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the helper did not shape within 30 s")
	}
	// Renewed every TTL/3, the shaping outlives the TTL.
	time.Sleep(ttl + ttl/2)
	if !shaped(t, n.nsA) {
		t.Fatalf("shaping gone while wirelab was alive and renewing:\n%s", qdiscs(t, n.nsA))
	}
	if err := cmd.Process.Signal(os.Kill); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for shaped(t, n.nsA) && time.Since(killed) < 3*ttl {
		time.Sleep(100 * time.Millisecond)
	}
	took := time.Since(killed)
	if shaped(t, n.nsA) {
		t.Fatalf("still shaped %s after SIGKILL (TTL %s):\n%s", took, ttl, qdiscs(t, n.nsA))
	}
	if took > ttl+time.Second {
		t.Errorf("shaping removed %s after SIGKILL; want within the TTL %s (+1 s)", took, ttl)
	}
	log, _ := os.ReadFile(filepath.Join(n.dir, "deadman.log"))
	t.Logf("wirelab SIGKILLed; the dead-man switch removed the shaping %s later (TTL %s): %s", took.Round(10*time.Millisecond), ttl, strings.TrimSpace(string(log)))
	// The qdiscs go before the IFB and the delay line: give the switch's last steps and its
	// exit a moment.
	var o []byte
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if o, _ = exec.Command("ip", "netns", "exec", n.nsA, "pgrep", "-f", "agent deadman").Output(); len(o) == 0 {
			break
		}
	}
	if len(o) > 0 {
		t.Errorf("the switch still runs 3 s after undoing: %s", o)
	}
}

func TestSSHBadInput(t *testing.T) {
	skipUnlessSSHRoot(t)
	n := newSSHNet(t)
	ctx := context.Background()
	a := n.dial(t, "client1", addrA)
	before := qdiscs(t, n.nsA)

	wrongKey := filepath.Join(n.dir, "other_key")
	mustRun(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", wrongKey)
	c := n.cfg("server1", addrB)
	c.KeyFile = wrongKey
	_, err := DialSSH(ctx, c)
	t.Logf("wrong key: %v", err)
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "host server1") {
		t.Errorf("wrong key: %v", err)
	}

	swapped := filepath.Join(n.dir, "known_hosts_swapped")
	if err := os.WriteFile(swapped, []byte(addrB+" "+n.pubA), 0o600); err != nil {
		t.Fatal(err)
	}
	c = n.cfg("server1", addrB)
	c.KnownHosts = swapped
	_, err = DialSSH(ctx, c)
	t.Logf("host key mismatch: %v", err)
	if !errors.Is(err, ErrHostKeyMismatch) || !strings.Contains(err.Error(), "host server1") || !strings.Contains(err.Error(), swapped+":1") {
		t.Errorf("host key mismatch: %v", err)
	}

	c = n.cfg("server2", addrNobody)
	c.Timeout = 2 * time.Second
	start := time.Now()
	_, err = DialSSH(ctx, c)
	t.Logf("unreachable (%s): %v", time.Since(start).Round(time.Millisecond), err)
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "host server2") || time.Since(start) > 5*time.Second {
		t.Errorf("unreachable: %v", err)
	}

	err = CheckNIC(ctx, a, "eth9")
	t.Logf("no such NIC: %v", err)
	if !errors.Is(err, ErrNoNIC) || !strings.Contains(err.Error(), "host client1") || !strings.Contains(err.Error(), "eth0") {
		t.Errorf("missing NIC: %v", err)
	}
	if after := qdiscs(t, n.nsA); after != before || shaped(t, n.nsA) {
		t.Errorf("bad input changed host A: %q → %q", before, after)
	}
}

// TestSSHDeadmanOnVeth runs `wirelab agent deadman` on a real shaped veth that nobody
// renews, and checks the qdiscs and the IFB are gone after the TTL.
func TestSSHDeadmanOnVeth(t *testing.T) {
	skipUnlessSSHRoot(t)
	agent := nstest.WirelabBinary(t)
	ns := "wls-" + nstest.FixtureID() + "-d"
	mustRun(t, "ip", "netns", "add", ns)
	t.Cleanup(func() { nstest.KillNetns(ns) })
	mustRun(t, "ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", "eth1", "netns", ns)
	mustRun(t, "ip", "-n", ns, "link", "set", "eth0", "up")
	p, err := PlanShape(ShapeTarget{Host: ns, NIC: "eth0", Peer: netip.MustParseAddr(addrB), KeepPorts: []uint16{22}}, link.Condition{RateBps: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Apply {
		mustRun(t, "ip", append([]string{"netns", "exec", ns}, c...)...)
	}
	if !shaped(t, ns) {
		t.Fatal("the plan did not shape eth0")
	}
	dir := t.TempDir()
	undo, err := FormatUndo(UndoFile("eth0")) // what the switch's undo file holds (remotelink.go)
	if err != nil {
		t.Fatal(err)
	}
	renew, undoFile := filepath.Join(dir, "renew"), filepath.Join(dir, "undo")
	if err := os.WriteFile(undoFile, []byte(undo), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(renew, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	const ttl = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, "ip", "netns", "exec", ns, agent, "agent", "deadman",
		"--ttl", ttl.String(), "--renew", renew, "--undo", undoFile).CombinedOutput()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("agent deadman: %v: %s", err, out)
	}
	if shaped(t, ns) {
		t.Errorf("still shaped after the switch fired:\n%s", qdiscs(t, ns))
	}
	if took < ttl || took > ttl+time.Second {
		t.Errorf("the switch fired after %s; want just after the TTL %s", took, ttl)
	}
	t.Logf("unrenewed for %s: %s", took.Round(10*time.Millisecond), strings.TrimSpace(string(out)))
}
