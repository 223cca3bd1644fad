package e2e

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/nstest"
)

// TestSSHTwoClients loads one server from two client hosts (nstest.SSHStar: three sshd
// namespaces, the clients' links bridged in the server's) with `wirelab run --hosts`:
// every point's threads split between the clients, each client's NIC shaped to 20 mbit
// toward the server with bytes through its shaped class, TLS with each client's own copy
// of the server's client files, the merged TPS the sum of the
// clients', and nothing left on any host after the run.
func TestSSHTwoClients(t *testing.T) {
	s, file, wl := twoClients(t, "198.18.30.1", "198.18.30.11", "198.18.30.12")
	before, _ := filepath.Glob("/tmp/wirelab-*")
	out := t.TempDir()
	start := time.Now()
	b, err := wl("run", "--hosts", file, "--rate", "20mbit", "--threads", "2,8", "--duration", "4s", "--warmup", "1s",
		"--tls", "--tables", "1", "--table-size", "1000", "--out", out).CombinedOutput()
	if err != nil {
		t.Fatalf("run --hosts with two clients: %v\n%s", err, b)
	}
	t.Logf("run took %s", time.Since(start).Round(time.Second))
	run := readRun(t, out)
	if len(run.Points) != 2 {
		t.Fatalf("%d points, want 2 (threads 2, 8)", len(run.Points))
	}
	wantShare := map[int][]int{2: {1, 1}, 8: {4, 4}}
	for _, p := range run.Points {
		if p.Failed || p.TPS <= 0 {
			t.Errorf("threads=%d: failed=%v (%s), TPS %.1f", p.Threads, p.Failed, p.FailReason, p.TPS)
			continue
		}
		if len(p.Clients) != 2 {
			t.Errorf("threads=%d: %d client rows, want 2", p.Threads, len(p.Clients))
			continue
		}
		var sum float64
		for i, c := range p.Clients {
			sum += c.TPS
			if want := []string{"app1", "app2"}[i]; c.Host != want || c.Threads != wantShare[p.Threads][i] {
				t.Errorf("threads=%d: client %d is %s with %d threads, want %s with %d", p.Threads, i, c.Host, c.Threads, want, wantShare[p.Threads][i])
			}
			if c.TPS <= 0 || c.WireBytesPerSUp <= 0 || c.WireBytesPerSDown <= 0 || c.CPUClient <= 0 || c.LatP95Ms <= 0 || c.Cores <= 0 {
				t.Errorf("threads=%d, %s: TPS %.1f, wire %.0f/%.0f B/s through its shaped class, CPU %.3f, p95 %.2f ms, %d cores: want all > 0",
					p.Threads, c.Host, c.TPS, c.WireBytesPerSUp, c.WireBytesPerSDown, c.CPUClient, c.LatP95Ms, c.Cores)
			}
			t.Logf("threads=%d %s: %d threads, %.1f TPS, p95 %.2f ms, wire %.0f up / %.0f down B/s, CPU %.3f",
				p.Threads, c.Host, c.Threads, c.TPS, c.LatP95Ms, c.WireBytesPerSUp, c.WireBytesPerSDown, c.CPUClient)
		}
		if math.Abs(p.TPS-sum) > 1e-6*sum {
			t.Errorf("threads=%d: merged TPS %.3f, clients sum to %.3f", p.Threads, p.TPS, sum)
		}
		// Each client has its own 20 mbit link: utilisation is over both, at most full.
		if p.LinkUtilization <= 0 || p.LinkUtilization > 1.05 {
			t.Errorf("threads=%d: link utilisation %.2f, want (0, 1] over the two clients' links", p.Threads, p.LinkUtilization)
		}
		if p.LatHistogram == nil || p.LatP95Ms <= 0 {
			t.Errorf("threads=%d: no merged histogram (p95 %.2f)", p.Threads, p.LatP95Ms)
		}
		t.Logf("threads=%d merged: %.1f TPS, p95 %.2f ms, wire %.0f up / %.0f down B/s, utilisation %.2f, server CPU %.2f, bottleneck %s",
			p.Threads, p.TPS, p.LatP95Ms, p.WireBytesPerSUp, p.WireBytesPerSDown, p.LinkUtilization, p.CPUServer, p.Bottleneck)
	}
	shaped := map[string]bool{}
	for _, d := range run.Environment.Link {
		if d.RateBps == 20_000_000 {
			shaped[strings.SplitN(d.Iface, ":", 2)[0]] = true
		}
	}
	if !shaped["app1"] || !shaped["app2"] {
		t.Errorf("environment.link %+v: want 20 mbit directions on app1 and app2", run.Environment.Link)
	}
	clients := 0
	for _, h := range run.Environment.Hosts {
		if h.Role == "client" {
			clients++
		}
	}
	if clients != 2 {
		t.Errorf("environment.hosts %+v: want two client hosts", run.Environment.Hosts)
	}
	if _, err := os.Stat(filepath.Join(out, "report.md")); err != nil {
		t.Errorf("no report: %v", err)
	}
	assertStarClean(t, s, before)
}

// twoClients builds a star of two client hosts and a server on the addresses given and
// writes its inventory; wl runs wirelab on the first client host, as a user would, and
// the test's cleanup runs `down --hosts` with it.
func twoClients(t *testing.T, server, client1, client2 string) (*nstest.SSHStar, string, func(args ...string) *exec.Cmd) {
	t.Helper()
	skipUnlessRoot(t)
	nstest.SkipUnlessSSHD(t)
	s := nstest.NewSSHStar(t, server, client1, client2)
	file, wl := starInventory(t, s)
	return s, file, wl
}

// starInventory writes the inventory of a star of two client hosts, app1 and app2, and a
// server, db; wl runs wirelab on the first client host, as a user would, and the test's
// cleanup runs `down --hosts` with it.
func starInventory(t *testing.T, s *nstest.SSHStar) (string, func(args ...string) *exec.Cmd) {
	t.Helper()
	inv := fmt.Sprintf(`known_hosts: %s
defaults: {user: root, port: 22, key: %s}
hosts:
  - {name: app1, role: client, address: %s, nic: %s}
  - {name: app2, role: client, address: %s, nic: %s}
  - {name: db, role: server, address: %s, server: {start: mariadb}}
`, s.KnownHosts, s.Key, s.ClientAddr[0], s.NICs[0], s.ClientAddr[1], s.NICs[1], s.ServerAddr)
	file := filepath.Join(s.Dir, "hosts.yaml")
	if err := os.WriteFile(file, []byte(inv), 0o600); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	wl := func(args ...string) *exec.Cmd {
		cmd := exec.Command("ip", append([]string{"netns", "exec", s.ClientNS[0], bin}, args...)...)
		cmd.Env = append(os.Environ(), "WIRELAB_STATE_DIR="+state)
		return cmd
	}
	t.Cleanup(func() { _ = wl("down", "--hosts", file).Run() })
	return file, wl
}

// assertStarClean is assertClean for a star's hosts.
func assertStarClean(t *testing.T, s *nstest.SSHStar, before []string) {
	t.Helper()
	var cs []clientNIC
	for i, ns := range s.ClientNS {
		cs = append(cs, clientNIC{ns, s.NICs[i]})
	}
	assertClean(t, cs, append([]string{s.ServerNS}, s.ClientNS...), before)
}

// TestSSHTwoClientsKill9Down kills wirelab with SIGKILL while two client hosts load the
// server through a delayed link: each client's dead-man switch unshapes its own NIC, and
// `down --hosts` then leaves nothing on any of the three hosts.
func TestSSHTwoClientsKill9Down(t *testing.T) {
	s, file, wl := twoClients(t, "198.18.32.1", "198.18.32.11", "198.18.32.12")
	before, _ := filepath.Glob("/tmp/wirelab-*")
	const ttl = 6 * time.Second
	r := startBG(t, wl("run", "--hosts", file, "--rate", "20mbit", "--rtt", "20ms", "--threads", "4", "--duration", "120s",
		"--tables", "1", "--table-size", "10000", "--deadman-ttl", ttl.String(), "--out", t.TempDir()))
	shaped := func(i int) bool {
		q, _ := exec.Command("ip", "netns", "exec", s.ClientNS[i], "tc", "qdisc", "show", "dev", nstest.ClientNIC(i)).Output()
		return strings.Contains(string(q), "htb")
	}
	loaded := func() bool {
		return shaped(0) && shaped(1) && sysbenchIn(s.ClientNS[0]) && sysbenchIn(s.ClientNS[1])
	}
	r.waitFor(t, loaded, func() string {
		return fmt.Sprintf("both clients shaped and loading (shaped %v %v, sysbench %v %v)",
			shaped(0), shaped(1), sysbenchIn(s.ClientNS[0]), sysbenchIn(s.ClientNS[1]))
	})
	time.Sleep(2 * time.Second)
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = r.wait()
	start := time.Now()
	for shaped(0) || shaped(1) || delayLineGoneIn(s.ClientNS[0]) != nil || delayLineGoneIn(s.ClientNS[1]) != nil {
		if time.Since(start) > ttl+3*time.Second {
			t.Fatalf("a client is still shaped %s after SIGKILL (TTL %s): app1 %v, app2 %v", time.Since(start).Round(time.Second), ttl, shaped(0), shaped(1))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("both clients unshaped by their dead-man switches %s after SIGKILL (TTL %s)", time.Since(start).Round(100*time.Millisecond), ttl)
	if b, err := wl("down", "--hosts", file).CombinedOutput(); err != nil {
		t.Fatalf("down --hosts: %v\n%s", err, b)
	}
	deadline := time.Now().Add(15 * time.Second) // sysbench ends once its SSH session is gone
	for (sysbenchIn(s.ClientNS[0]) || sysbenchIn(s.ClientNS[1])) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	assertStarClean(t, s, before)
}
