package hosts

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/nstest"
)

// The root tests below build two real hosts with nstest.NewSSHPair: network namespaces A
// (198.18.10.1) and B (198.18.10.2, plus 198.18.10.3 as a second, unshaped destination)
// joined by a veth pair of their own, each running Debian's sshd with its own host key and
// a key authorized for the test. wirelab's side dials from inside A, as if it ran on the
// client machine.

const (
	addrA, addrB, addrB2 = "198.18.10.1", "198.18.10.2", "198.18.10.3"
	addrNobody           = "198.18.10.9"
)

func skipUnlessSSHRoot(t *testing.T) {
	t.Helper()
	nstest.SkipUnlessRoot(t, nstest.SSHD, "ssh-keygen", "ip", "tc")
}

type sshNet struct {
	nsA, nsB   string
	dir        string
	key        string // the client's private key file
	knownHosts string
	pubA, pubB string // host public keys, as in a .pub file
}

func mustRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func newSSHNet(t *testing.T) *sshNet {
	t.Helper()
	// A switch killed with its wirelab leaves its pid file; /run is this machine's, shared
	// by the test hosts.
	t.Cleanup(func() {
		for _, h := range []string{"client1", "server1"} {
			_ = os.RemoveAll(switchDir(h, "eth0"))
		}
	})
	p := nstest.NewSSHPair(t, addrA, addrB, addrB2)
	return &sshNet{nsA: p.NSA, nsB: p.NSB, dir: p.Dir, key: p.Key, knownHosts: p.KnownHosts, pubA: p.PubA, pubB: p.PubB}
}

// cfg is how the test reaches the host at addr; wirelab's side is inside A.
func (n *sshNet) cfg(name, addr string) SSHConfig {
	return SSHConfig{Name: name, Addr: addr, User: "root", KeyFile: n.key, KnownHosts: n.knownHosts,
		Timeout: 3 * time.Second, Dial: nstest.DialIn(n.nsA)}
}

// dial connects, waiting up to 5 s for sshd to listen.
func (n *sshNet) dial(t *testing.T, name, addr string) *SSH {
	t.Helper()
	h, err := DialSSHWait(context.Background(), n.cfg(name, addr), 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", name, err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// qdiscs is `tc qdisc show dev eth0` in ns.
func qdiscs(t *testing.T, ns string) string {
	t.Helper()
	return mustRun(t, "ip", "netns", "exec", ns, "tc", "qdisc", "show", "dev", "eth0")
}

// shaped reports whether ns's eth0 carries wirelab's HTB root or ingress qdisc, or the IFB exists.
func shaped(t *testing.T, ns string) bool {
	t.Helper()
	q := qdiscs(t, ns)
	ifb := exec.Command("ip", "-n", ns, "link", "show", "dev", IFBName("eth0")).Run() == nil
	return strings.Contains(q, "qdisc htb") || strings.Contains(q, "qdisc ingress") || ifb
}
