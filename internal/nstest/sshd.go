package nstest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wirelab/wirelab/internal/procfs"
)

// SSHD is the OpenSSH server SSHPair runs (Debian's openssh-server).
const SSHD = "/usr/sbin/sshd"

// SkipUnlessSSHD skips the test unless SkipUnlessRoot passes for what SSHPair needs.
func SkipUnlessSSHD(t testing.TB) {
	t.Helper()
	SkipUnlessRoot(t, SSHD, "ssh-keygen", "ip")
}

// SSHPair is two real SSH hosts: network namespaces A and B joined by a veth pair (eth0 in
// each), each running this machine's sshd with a host key of its own and one client key
// authorized for root. Tests dial from inside A (DialIn), as wirelab would from the client
// machine.
type SSHPair struct {
	NSA, NSB     string
	AddrA, AddrB string
	Dir          string // keys, sshd configs and logs; removed when the test ends
	Key          string // the client's private key file
	KnownHosts   string // both hosts' keys, by address
	PubA, PubB   string // the hosts' public keys, as in a .pub file
}

// NewSSHPair builds the pair with A on addrA/24 and B on addrB/24 plus moreB (more
// addresses of B in the same /24). Use addresses of 198.18.0.0/15, and a /24 no parallel
// test uses. Everything, sshd and whatever its sessions started included, is killed and
// removed when the test ends.
func NewSSHPair(t testing.TB, addrA, addrB string, moreB ...string) *SSHPair {
	t.Helper()
	id := FixtureID()
	p := &SSHPair{NSA: sshPrefix + id + "-a", NSB: sshPrefix + id + "-b", AddrA: addrA, AddrB: addrB, Dir: t.TempDir()}
	for _, ns := range []string{p.NSA, p.NSB} {
		mustRun(t, "ip", "netns", "add", ns)
		t.Cleanup(func() { KillNetns(ns) })
		mustRun(t, "ip", "-n", ns, "link", "set", "lo", "up")
	}
	mustRun(t, "ip", "link", "add", "eth0", "netns", p.NSA, "type", "veth", "peer", "name", "eth0", "netns", p.NSB)
	mustRun(t, "ip", "-n", p.NSA, "addr", "add", addrA+"/24", "dev", "eth0")
	for _, a := range append([]string{addrB}, moreB...) {
		mustRun(t, "ip", "-n", p.NSB, "addr", "add", a+"/24", "dev", "eth0")
	}
	mustRun(t, "ip", "-n", p.NSA, "link", "set", "eth0", "up")
	mustRun(t, "ip", "-n", p.NSB, "link", "set", "eth0", "up")
	p.Key = filepath.Join(p.Dir, "id_ed25519")
	mustRun(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "wirelab-test", "-f", p.Key)
	p.PubA = startSSHD(t, p.Dir, p.Key, p.NSA, addrA)
	p.PubB = startSSHD(t, p.Dir, p.Key, p.NSB, addrB)
	for _, h := range []struct{ ns, addr string }{{p.NSA, addrA}, {p.NSB, addrB}} {
		waitListening(t, h.ns, net.JoinHostPort(h.addr, "22"))
	}
	p.KnownHosts = filepath.Join(p.Dir, "known_hosts")
	kh := addrA + " " + p.PubA + addrB + " " + p.PubB
	if err := os.WriteFile(p.KnownHosts, []byte(kh), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustRun(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// KillNetns kills whatever runs in ns (sshd, its sessions, what they started) and deletes
// it.
func KillNetns(ns string) {
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

// startSSHD runs sshd in ns on addr:22 with a fresh host key (kept under dir), key's
// public half authorized for root, and returns the host's public key.
func startSSHD(t testing.TB, dir, key, ns, addr string) string {
	t.Helper()
	d := filepath.Join(dir, ns)
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	hostKey := filepath.Join(d, "ssh_host_ed25519_key")
	mustRun(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", hostKey)
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	must := func(path, s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
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
	cmd := exec.Command("ip", "netns", "exec", ns, SSHD, "-D", "-e", "-f", cfg)
	if rc := rootBashrc(); rc != "" {
		// bash sources root's ~/.bashrc in every SSH session: on a developer machine that
		// can be slow (a pyenv rehash behind a lock, which a session KillNetns kills
		// mid-way leaves stale for everyone). ip netns exec gives sshd a mount namespace
		// of its own, so an empty file over it hides it from the test's sessions only.
		empty := filepath.Join(d, "empty-bashrc")
		must(empty, "")
		cmd = exec.Command("ip", "netns", "exec", ns, "sh", "-c", `mount --bind "$0" "$1" && exec "$2" -D -e -f "$3"`,
			empty, rc, SSHD, cfg)
	}
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

// rootBashrc is root's ~/.bashrc, "" when it has none.
func rootBashrc() string {
	u, err := user.Lookup("root")
	if err != nil {
		return ""
	}
	rc := filepath.Join(u.HomeDir, ".bashrc")
	if _, err := os.Stat(rc); err != nil {
		return ""
	}
	return rc
}

// DialIn returns a dialer whose connections are made from inside namespace ns: a locked
// thread enters ns, dials and goes back (the socket stays in ns). If going back fails the
// thread stays locked and the runtime discards it with the goroutine.
func DialIn(ns string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		type res struct {
			c   net.Conn
			err error
		}
		ch := make(chan res, 1)
		go func() {
			runtime.LockOSThread()
			orig, err := os.Open(procfs.ThreadNetNS)
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

// WirelabBinary builds ./cmd/wirelab into a directory of the test's own (the agent that
// tests copy to their SSH hosts), or returns WIRELAB_TEST_BINARY when set (a binary built
// before the test takes the measurement lock). The caller's package is two directories
// below the module root, as every package of internal/ is.
func WirelabBinary(t testing.TB) string {
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

// waitListening waits up to 10 s until addr accepts a TCP connection from inside ns: sshd
// was started, not yet listening, and a client that cannot retry (wirelab's CLI) would
// find it unreachable.
func waitListening(t testing.TB, ns, addr string) {
	t.Helper()
	dial := DialIn(ns)
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := dial(ctx, "tcp", addr)
		cancel()
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd in %s does not listen on %s: %v", ns, addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
