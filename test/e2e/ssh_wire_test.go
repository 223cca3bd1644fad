package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/nstest"
)

// TestSSHQdiscRemovedMidRunFailsThePoint removes one client's root qdisc with tc, from
// outside wirelab, while two clients load the server through their 20 mbit links: the
// point is kept as failed, its reason naming that client and what is gone, never the
// other client, the report says it, and nothing is left on the hosts.
func TestSSHQdiscRemovedMidRunFailsThePoint(t *testing.T) {
	s, file, wl := twoClients(t, "198.18.36.1", "198.18.36.11", "198.18.36.12")
	before, _ := filepath.Glob("/tmp/wirelab-*")
	out := t.TempDir()
	r := startBG(t, wl("run", "--hosts", file, "--rate", "20mbit", "--threads", "2", "--duration", "4s", "--warmup", "1s",
		"--tables", "1", "--table-size", "1000", "--out", out))
	r.waitFor(t, func() bool { return sysbenchIn(s.ClientNS[0]) && sysbenchIn(s.ClientNS[1]) },
		func() string { return "sysbench on both clients" })
	time.Sleep(1500 * time.Millisecond) // into the point's measured seconds
	if b, err := exec.Command("ip", "netns", "exec", s.ClientNS[1], "tc", "qdisc", "del", "dev", s.NICs[1], "root").CombinedOutput(); err != nil {
		t.Fatalf("remove app2's root qdisc: %v: %s", err, b)
	}
	if err := r.wait(); err != nil {
		t.Fatalf("run --hosts: %v\n%s", err, r.log.String())
	}
	run := readRun(t, out)
	if len(run.Points) != 1 {
		t.Fatalf("%d points, want 1", len(run.Points))
	}
	p := run.Points[0]
	want := "client app2: its HTB class 1:1 on " + s.NICs[1] + " is gone (qdisc noqueue); the "
	if !p.Failed || !strings.HasPrefix(p.FailReason, want) || !strings.Contains(p.FailReason, "TPS it ran were not measured on the link asked (rate 20mbit)") ||
		strings.Contains(p.FailReason, "app1") {
		t.Errorf("point failed=%v, reason %q; want it failed naming app2 only (%q...)", p.Failed, p.FailReason, want)
	}
	report, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil || !strings.Contains(string(report), "client app2: its HTB class 1:1") {
		t.Errorf("the report does not say why the point failed (%v)", err)
	}
	t.Logf("the point failed: %s", p.FailReason)
	assertStarClean(t, s, before)
}

// TestSSHTwoClientsOfOneMachineOneNICNameRefused: two client hosts that are namespaces of
// one machine (sharing its /run) and both shape a NIC named eth0 are refused by name
// before anything is staged or shaped on any host.
func TestSSHTwoClientsOfOneMachineOneNICNameRefused(t *testing.T) {
	skipUnlessRoot(t)
	nstest.SkipUnlessSSHD(t)
	s := nstest.NewSSHStarOneNIC(t, "eth0", "198.18.37.1", "198.18.37.11", "198.18.37.12")
	file, wl := starInventory(t, s)
	before, _ := filepath.Glob("/tmp/wirelab-*")
	b, err := wl("run", "--hosts", file, "--rate", "20mbit", "--threads", "2", "--duration", "2s", "--out", t.TempDir()).CombinedOutput()
	if err == nil {
		t.Fatalf("run --hosts with two clients on one machine's eth0 was not refused:\n%s", b)
	}
	if !strings.Contains(string(b), "clients app1 and app2 are one machine (they share its /run) and both shape a NIC named eth0") {
		t.Errorf("the refusal does not name the clients and the NIC:\n%s", b)
	}
	assertStarClean(t, s, before)
}
