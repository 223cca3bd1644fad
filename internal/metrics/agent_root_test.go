//go:build linux

package metrics

import (
	"context"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/execx"

	"github.com/wirelab/wirelab/internal/nstest"
)

// nsRunner runs commands inside a network namespace.
type nsRunner struct{ ns string }

func (r nsRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	n, a := execx.InNetns(r.ns, name, args...)
	return execx.OS{}.Run(ctx, n, a...)
}

func mustTC(t *testing.T, ns string, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", append([]string{"netns", "exec", ns, "tc"}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("tc %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// shapeUp puts wirelab's kind of shaping on dev in ns: an HTB root, class 1:1, and a
// filter that sends only traffic to peer through it.
func shapeUp(t *testing.T, ns, dev, peer string) {
	t.Helper()
	mustTC(t, ns, "qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default", "0")
	mustTC(t, ns, "class", "replace", "dev", dev, "parent", "1:", "classid", "1:1", "htb", "rate", "1gbit", "ceil", "1gbit")
	mustTC(t, ns, "filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1",
		"u32", "match", "ip", "dst", peer+"/32", "flowid", "1:1")
}

// sink accepts connections in ns and reads them to the end; it returns the port.
func sink(t *testing.T, ns string) int {
	t.Helper()
	var ln net.Listener
	if err := withNetns(filepath.Join("/run/netns", ns), func() (err error) {
		ln, err = net.Listen("tcp", "0.0.0.0:0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(io.Discard, c)
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestAgentCountsARealHTBClass runs the agent's class reader against this machine's tc:
// bytes sent through the shaped class are counted, removing the shaping counts nothing
// and goes nowhere backwards, and a re-created class counts on from there. The down
// direction names a device that does not exist, as an IFB before shaping.
func TestAgentCountsARealHTBClass(t *testing.T) {
	nstest.SkipUnlessRoot(t, "ip", "tc")
	a, b, upIf, _ := twoNamespaces(t)
	port := sink(t, b)
	shapeUp(t, a, upIf, "198.18.251.2")
	agent, err := NewAgent(AgentConfig{UpClass: TCClass{upIf, ClassID{1, 1}},
		DownClass: TCClass{"wlnx" + upIf[2:], ClassID{1, 1}}, Runner: nsRunner{a}})
	if err != nil {
		t.Fatal(err)
	}
	line := func() AgentLine {
		t.Helper()
		l, err := agent.Line(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	const n1, n2 = 1 << 20, 512 << 10
	base := line()
	send(t, a, "198.18.251.2", port, n1)
	l1 := waitLine(t, line, func(l AgentLine) bool { return l.UpBytes >= n1 })
	if base.UpBytes != 0 || l1.UpPkts < n1/65536 || l1.DownBytes != 0 {
		t.Errorf("baseline %+v, after %d bytes %+v", base, n1, l1)
	}

	mustTC(t, a, "qdisc", "del", "dev", upIf, "root")
	send(t, a, "198.18.251.2", port, n2) // unshaped: not the class's bytes
	l2 := line()
	if l2.UpBytes < l1.UpBytes || l2.UpBytes > l1.UpBytes+n2/4 {
		t.Errorf("without the class: up %d, before %d: want no new bytes and never fewer", l2.UpBytes, l1.UpBytes)
	}

	shapeUp(t, a, upIf, "198.18.251.2")
	send(t, a, "198.18.251.2", port, n2)
	l3 := waitLine(t, line, func(l AgentLine) bool { return l.UpBytes >= l2.UpBytes+n2 })
	t.Logf("up bytes: %d, %d, %d, %d", base.UpBytes, l1.UpBytes, l2.UpBytes, l3.UpBytes)
}

// waitLine reads lines until ok holds (the last ACKs may trail the write by a moment).
func waitLine(t *testing.T, line func() AgentLine, ok func(AgentLine) bool) AgentLine {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		l := line()
		if ok(l) {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("counters did not reach the bytes sent: %+v", l)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
