package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/nstest"
	"github.com/wirelab/wirelab/internal/result"
)

// roundTripsPerTxn is what one oltp_read_only transaction waits for: BEGIN, 10 point
// selects, 4 range queries, COMMIT, one round trip each.
const roundTripsPerTxn = 16

// TestSSHDelayLineWithoutNetem runs `wirelab run --hosts --rtt 20ms` with one thread
// between the two SSH hosts, whose kernel (this machine's) may lack netem: the client's
// delay line must make the point latency-bound at the TPS 16 round trips of 20 ms allow
// on top of the same hosts' unshaped transaction time, while the SSH port with the server
// is never delayed and every other port is. Nothing may be left on the hosts after the
// run, nor after `down --hosts`.
func TestSSHDelayLineWithoutNetem(t *testing.T) {
	p, inv := sshHosts(t, "198.18.15.1", "198.18.15.2")
	before, _ := filepath.Glob("/tmp/wirelab-*")
	args := []string{"run", "--hosts", inv, "--threads", "1", "--duration", "15s",
		"--tables", "1", "--table-size", "10000", "--workload", "oltp_read_only"}

	// The unshaped transaction time of these hosts, measured first.
	out0 := t.TempDir()
	if b, err := inClient(p, t.TempDir(), append(args, "--rtt", "0", "--out", out0)...).CombinedOutput(); err != nil {
		t.Fatalf("run --hosts --rtt 0: %v\n%s", err, b)
	}
	bare := onePoint(t, out0)
	assertHostsClean(t, p, before)

	out := t.TempDir()
	r := startInClient(t, p, t.TempDir(), append(args, "--rtt", "20ms", "--out", out)...)
	// While the load runs: time TCP handshakes from the client to the server's SSH port
	// (kept out of the delay line) and to a closed port (delayed: the RST comes back
	// after one round trip).
	r.waitFor(t, func() bool { return delayLineUp(p) && sysbenchRuns(p) }, func() string { return "delay line and load" })
	sshRTT := handshake(t, p, net.JoinHostPort(p.AddrB, "22"))
	otherRTT := handshake(t, p, net.JoinHostPort(p.AddrB, "9"))
	t.Logf("TCP handshake from the client, median of 5: SSH port %s, closed port 9 %s", sshRTT, otherRTT)
	if sshRTT > 5*time.Millisecond {
		t.Errorf("the SSH port's round trip is %s: the control connection is delayed", sshRTT)
	}
	if otherRTT < 20*time.Millisecond || otherRTT > 30*time.Millisecond {
		t.Errorf("a non-SSH port's round trip is %s, want the 20 ms asked (20-30 ms)", otherRTT)
	}
	passed, queued := delayCounters(t, p)
	t.Logf("delay line rules: %d SSH packets returned undelayed, %d packets queued", passed, queued)
	if passed == 0 || queued == 0 {
		t.Errorf("want SSH packets passed and the peer's packets queued, got %d and %d", passed, queued)
	}

	if err := r.wait(); err != nil {
		t.Fatalf("run --hosts --rtt 20ms: %v\n%s", err, r.log.String())
	}
	pt := onePoint(t, out)
	// One thread waits for every round trip in turn: a transaction takes 16 × 20 ms on top
	// of what it takes unshaped. 10% covers the delay line's wake-ups (a few tenths of a
	// millisecond late per packet on this shared machine, 32 packets a transaction: ~3%)
	// and one transaction more or less in a 15 s point (~2%).
	perTxn := roundTripsPerTxn*0.020 + 1/bare.TPS
	want := 1 / perTxn
	t.Logf("rtt 20ms, 1 thread: %.2f TPS (%s), expected %.2f = 1/(16 × 20 ms + %.2f ms unshaped at %.1f TPS)",
		pt.TPS, pt.Bottleneck, want, 1000/bare.TPS, bare.TPS)
	if dev := pt.TPS/want - 1; dev < -0.10 || dev > 0.10 {
		t.Errorf("TPS %.2f is %+.1f%% off the %.2f that 16 round trips of 20 ms allow", pt.TPS, 100*dev, want)
	}
	if pt.Bottleneck != "latency" {
		t.Errorf("bottleneck %q (%s), want latency", pt.Bottleneck, pt.BottleneckWhy)
	}
	if pt.LinkDelayMs != 10 {
		t.Errorf("link_delay_ms %g, want 10 (one way)", pt.LinkDelayMs)
	}
	// The client's delay line is costed as the lab's is, read on the client over SSH and
	// weighed against the client host's own cores.
	if c := pt.LabCost; queued > 0 && (c == nil || c.Host != "app" || c.DelayLinePackets == 0 || c.DelayLineCPUS <= 0 || c.Cores == 0) {
		t.Errorf("lab cost %+v, want the delay line of client app with its packets, CPU and cores", c)
	}
	assertHostsClean(t, p, before)
	if b, err := inClient(p, t.TempDir(), "down", "--hosts", inv).CombinedOutput(); err != nil {
		t.Fatalf("down --hosts: %v\n%s", err, b)
	}
	assertHostsClean(t, p, before)
}

// bgRun is wirelab running in the client host in the background; the test's cleanup
// kills it if the test has not waited for it.
type bgRun struct {
	cmd    *exec.Cmd
	log    *strings.Builder
	exited chan error
	err    error
	ended  bool
}

func startInClient(t *testing.T, p *nstest.SSHPair, state string, args ...string) *bgRun {
	t.Helper()
	return startBG(t, inClient(p, state, args...))
}

// startBG starts cmd in the background, its output kept; the test's cleanup kills it
// unless it has ended.
func startBG(t *testing.T, cmd *exec.Cmd) *bgRun {
	t.Helper()
	r := &bgRun{cmd: cmd, log: &strings.Builder{}, exited: make(chan error, 1)}
	r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.exited <- r.cmd.Wait() }()
	t.Cleanup(func() {
		if !r.ended {
			_ = r.cmd.Process.Kill()
			_ = r.wait()
		}
	})
	return r
}

// wait waits for wirelab to exit and returns how it ended.
func (r *bgRun) wait() error {
	if !r.ended {
		r.err, r.ended = <-r.exited, true
	}
	return r.err
}

// waitFor polls ready until it holds; it fails the test if wirelab exits first or 3
// minutes pass. what says what was awaited.
func (r *bgRun) waitFor(t *testing.T, ready func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for !ready() {
		select {
		case err := <-r.exited:
			r.err, r.ended = err, true
			t.Fatalf("wirelab %s ended before %s: %v\n%s", strings.Join(r.cmd.Args, " "), what(), err, r.log.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 3 minutes:\n%s", what(), r.log.String())
		}
	}
}

// onePoint reads a run's only point and fails unless it was measured.
func onePoint(t *testing.T, dir string) result.Point {
	t.Helper()
	run := readRun(t, dir)
	if len(run.Points) != 1 || run.Points[0].Failed || run.Points[0].TPS <= 0 {
		t.Fatalf("want one measured point, got %+v", run.Points)
	}
	return run.Points[0]
}

// handshake is the median time of 5 TCP connects from the client host to addr; a refused
// connect counts too (the RST is the answer).
func handshake(t *testing.T, p *nstest.SSHPair, addr string) time.Duration {
	t.Helper()
	dial := nstest.DialIn(p.NSA)
	var ds []time.Duration
	for range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		start := time.Now()
		c, err := dial(ctx, "tcp", addr)
		took := time.Since(start)
		cancel()
		if err == nil {
			c.Close()
		} else if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("connect to %s from the client: %v", addr, err)
		}
		ds = append(ds, took)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2].Round(10 * time.Microsecond)
}

// delayLineUp reports whether the client host has the delay line's chain and delayer.
func delayLineUp(p *nstest.SSHPair) bool {
	return exec.Command("ip", "netns", "exec", p.NSA, "iptables", "-t", "mangle", "-S", "WIRELAB-DELAY").Run() == nil &&
		len(delayers(p)) > 0
}

// delayers are the pids of delayers running in the client host.
func delayers(p *nstest.SSHPair) []string { return delayersIn(p.NSA) }

// delayersIn are the pids of delayers running in namespace ns.
func delayersIn(ns string) []string {
	out, _ := exec.Command("ip", "netns", "pids", ns).Output()
	var pids []string
	for _, pid := range strings.Fields(string(out)) {
		if c, _ := os.ReadFile("/proc/" + pid + "/cmdline"); strings.Contains(string(c), "\x00__delayer\x00") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// sysbenchRuns reports whether sysbench runs in the client host.
func sysbenchRuns(p *nstest.SSHPair) bool { return sysbenchIn(p.NSA) }

// delayCounters reads the delay line's rules on the client: packets on the SSH port
// returned undelayed, and packets queued.
func delayCounters(t *testing.T, p *nstest.SSHPair) (passed, queued int64) {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", p.NSA, "iptables", "-t", "mangle", "-L", "WIRELAB-DELAY", "-v", "-x", "-n").CombinedOutput()
	if err != nil {
		t.Fatalf("read the delay line's rules: %v\n%s", err, out)
	}
	rule := regexp.MustCompile(`^\s*(\d+)\s+\d+\s+(RETURN|NFQUEUE)\s`)
	for _, l := range strings.Split(string(out), "\n") {
		m := rule.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		switch {
		case m[2] == "RETURN" && (strings.Contains(l, "dpt:22") || strings.Contains(l, "spt:22")):
			passed += n
		case m[2] == "NFQUEUE":
			queued += n
		}
	}
	return passed, queued
}

// delayLineGone fails unless the client host has neither the delay line's rules nor a
// delayer.
func delayLineGone(p *nstest.SSHPair) error { return delayLineGoneIn(p.NSA) }

// delayLineGoneIn is delayLineGone for the host in namespace ns.
func delayLineGoneIn(ns string) error {
	if b, err := exec.Command("ip", "netns", "exec", ns, "iptables", "-t", "mangle", "-S").Output(); err == nil &&
		strings.Contains(string(b), "WIRELAB-DELAY") {
		return fmt.Errorf("the delay line's rules are still there:\n%s", b)
	}
	if d := delayersIn(ns); len(d) > 0 {
		return fmt.Errorf("delayer %v still runs", d)
	}
	return nil
}
