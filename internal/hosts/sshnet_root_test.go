package hosts

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The root tests below build two real hosts: network namespaces A (198.18.10.1) and B
// (198.18.10.2, plus 198.18.10.3 as a second, unshaped destination) joined by a veth pair
// of their own, each running Debian's sshd with its own host key and a key authorized for
// the test. wirelab's side dials from inside A, as if it ran on the client machine.

const (
	addrA, addrB, addrB2 = "198.18.10.1", "198.18.10.2", "198.18.10.3"
	addrNobody           = "198.18.10.9"
	sshdPath             = "/usr/sbin/sshd"
)

func skipUnlessSSHRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 || testing.Short() {
		t.Skip("needs root and not -short: network namespaces, sshd, tc")
	}
	for _, p := range []string{sshdPath, "ssh-keygen", "ip", "tc"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("needs %s (apt-get install openssh-server iproute2)", p)
		}
	}
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
	id := strconv.FormatInt(time.Now().UnixNano()%1e6, 36)
	n := &sshNet{nsA: "wls-" + id + "-a", nsB: "wls-" + id + "-b", dir: t.TempDir()}
	// A switch killed with its wirelab leaves its pid file; /run is this machine's, shared
	// by the test hosts.
	t.Cleanup(func() { _ = os.Remove(pidFile("eth0")) })
	for _, ns := range []string{n.nsA, n.nsB} {
		mustRun(t, "ip", "netns", "add", ns)
		t.Cleanup(func() { killNetns(ns) })
		mustRun(t, "ip", "-n", ns, "link", "set", "lo", "up")
	}
	mustRun(t, "ip", "link", "add", "eth0", "netns", n.nsA, "type", "veth", "peer", "name", "eth0", "netns", n.nsB)
	mustRun(t, "ip", "-n", n.nsA, "addr", "add", addrA+"/24", "dev", "eth0")
	mustRun(t, "ip", "-n", n.nsB, "addr", "add", addrB+"/24", "dev", "eth0")
	mustRun(t, "ip", "-n", n.nsB, "addr", "add", addrB2+"/24", "dev", "eth0")
	mustRun(t, "ip", "-n", n.nsA, "link", "set", "eth0", "up")
	mustRun(t, "ip", "-n", n.nsB, "link", "set", "eth0", "up")
	n.key = filepath.Join(n.dir, "id_ed25519")
	mustRun(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "wirelab-test", "-f", n.key)
	n.pubA = n.startSSHD(t, n.nsA, addrA)
	n.pubB = n.startSSHD(t, n.nsB, addrB)
	n.knownHosts = filepath.Join(n.dir, "known_hosts")
	kh := addrA + " " + n.pubA + addrB + " " + n.pubB
	if err := os.WriteFile(n.knownHosts, []byte(kh), 0o600); err != nil {
		t.Fatal(err)
	}
	return n
}

// killNetns kills whatever runs in ns (sshd, its sessions, what they started) and
// deletes it.
func killNetns(ns string) {
	out, _ := exec.Command("ip", "netns", "pids", ns).Output()
	for _, f := range strings.Fields(string(out)) {
		// Never this process: a thread of it may have visited ns to dial.
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 && pid != os.Getpid() {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
	for i := 0; i < 50; i++ {
		if out, _ := exec.Command("ip", "netns", "pids", ns).Output(); len(strings.TrimSpace(string(out))) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = exec.Command("ip", "netns", "del", ns).Run()
}

// startSSHD runs sshd in ns on addr:22 with a fresh host key and returns the public key.
func (n *sshNet) startSSHD(t *testing.T, ns, addr string) string {
	t.Helper()
	d := filepath.Join(n.dir, ns)
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	hostKey := filepath.Join(d, "ssh_host_ed25519_key")
	mustRun(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", hostKey)
	pub, err := os.ReadFile(n.key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	must := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	must(filepath.Join(d, "authorized_keys"), string(pub))
	cfg := filepath.Join(d, "sshd_config")
	must(cfg, fmt.Sprintf("ListenAddress %s:22\nHostKey %s\nPidFile %s/sshd.pid\nAuthorizedKeysFile %s/authorized_keys\n"+
		"PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n",
		addr, hostKey, d, d))
	_ = os.MkdirAll("/run/sshd", 0o755) // sshd's privilege separation directory
	logf, err := os.Create(filepath.Join(d, "sshd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", ns, sshdPath, "-D", "-e", "-f", cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sshd in %s: %v", ns, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("sshd in %s:\n%s", ns, b)
		}
	})
	hp, err := os.ReadFile(hostKey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return string(hp)
}

// dialIn returns a dialer whose connections are made from inside namespace ns: a locked
// thread enters ns, dials and goes back (the socket stays in ns). If going back fails the
// thread stays locked and the runtime discards it with the goroutine.
func dialIn(ns string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		type res struct {
			c   net.Conn
			err error
		}
		ch := make(chan res, 1)
		go func() {
			runtime.LockOSThread()
			orig, err := os.Open("/proc/thread-self/ns/net")
			if err != nil {
				runtime.UnlockOSThread()
				ch <- res{nil, err}
				return
			}
			defer orig.Close()
			f, err := os.Open("/run/netns/" + ns)
			if err != nil {
				runtime.UnlockOSThread()
				ch <- res{nil, err}
				return
			}
			defer f.Close()
			if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
				runtime.UnlockOSThread()
				ch <- res{nil, fmt.Errorf("setns %s: %w", ns, err)}
				return
			}
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET) == nil {
				runtime.UnlockOSThread()
			}
			ch <- res{c, err}
		}()
		r := <-ch
		return r.c, r.err
	}
}

// cfg is how the test reaches the host at addr; wirelab's side is inside A.
func (n *sshNet) cfg(name, addr string) SSHConfig {
	return SSHConfig{Name: name, Addr: addr, User: "root", KeyFile: n.key, KnownHosts: n.knownHosts,
		Timeout: 3 * time.Second, Dial: dialIn(n.nsA)}
}

// dial connects, waiting up to 5 s for sshd to listen.
func (n *sshNet) dial(t *testing.T, name, addr string) *SSH {
	t.Helper()
	var err error
	for i := 0; i < 50; i++ {
		var h *SSH
		if h, err = DialSSH(context.Background(), n.cfg(name, addr)); err == nil {
			t.Cleanup(func() { h.Close() })
			return h
		}
		if !errors.Is(err, ErrUnreachable) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("dial %s: %v", name, err)
	return nil
}

// wirelabBinary builds ./cmd/wirelab into a directory of its own for the remote agent, or
// takes WIRELAB_TEST_BINARY (built before taking the measurement lock).
func wirelabBinary(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("WIRELAB_TEST_BINARY"); b != "" {
		return b
	}
	out := filepath.Join(t.TempDir(), "wirelab")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/wirelab")
	cmd.Dir = "../.."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build wirelab: %v: %s", err, b)
	}
	return out
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
