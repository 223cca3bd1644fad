package hosts

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

func TestSSHHostRunCopyReadStartStop(t *testing.T) {
	key, signer, _ := clientKey(t)
	srv := startTestSSHServer(t, signer.PublicKey())
	kh := writeKnownHosts(t, knownhosts.Line([]string{srv.addr}, srv.hostKey.PublicKey()))
	h := dialTest(t, SSHConfig{Name: "db1", Addr: srv.addr, User: "u", KeyFile: key, KnownHosts: kh})
	ctx := context.Background()

	out, err := h.Run(ctx, "printf", "%s", "it's a $test")
	if err != nil || string(out) != "it's a $test" {
		t.Fatalf("Run: %q, %v", out, err)
	}
	_, err = h.Run(ctx, "sh", "-c", "echo oops >&2; exit 3")
	if err == nil || !strings.Contains(err.Error(), "host db1") || !strings.Contains(err.Error(), "oops") {
		t.Errorf("failing command: want the host and stderr in %v", err)
	}

	dst := filepath.Join(t.TempDir(), "copied")
	payload := strings.Repeat("wirelab\n", 100_000)
	if err := h.Copy(ctx, strings.NewReader(payload), dst, 0o750); err != nil {
		t.Fatal(err)
	}
	got, err := h.ReadFile(ctx, dst)
	if err != nil || string(got) != payload {
		t.Fatalf("ReadFile after Copy: %d bytes, %v", len(got), err)
	}
	if fi, err := os.Stat(dst); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("copied file mode: %v, %v", fi.Mode(), err)
	}
	if stat, err := h.ReadFile(ctx, "/proc/stat"); err != nil || !strings.HasPrefix(string(stat), "cpu ") {
		t.Errorf("/proc/stat: %.40q, %v", stat, err)
	}

	// sh -c forks a child so Stop must take the whole process group.
	p, err := h.Start(ctx, "sleeper", []string{"sh", "-c", "sleep 30 & sleep 30; wait"}, filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(context.Background()) })
	time.Sleep(200 * time.Millisecond)
	if pgid, err := syscall.Getpgid(p.Pid()); err != nil || pgid != p.Pid() {
		t.Fatalf("started process %d: want it leading its own group, got pgid %d, %v", p.Pid(), pgid, err)
	}
	if err := p.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(p.Pid())); err == nil {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(p.Pid()) + "/stat"); !strings.Contains(string(b), ") Z ") {
			t.Errorf("process %d still runs after Stop", p.Pid())
		}
	}
	if err := p.Stop(ctx); err != nil {
		t.Errorf("Stop of a stopped process: %v", err)
	}
}

func TestSSHHostKeyErrors(t *testing.T) {
	key, signer, _ := clientKey(t)
	srv := startTestSSHServer(t, signer.PublicKey())
	ctx := context.Background()

	empty := writeKnownHosts(t)
	_, err := DialSSH(ctx, SSHConfig{Name: "db1", Addr: srv.addr, User: "u", KeyFile: key, KnownHosts: empty})
	t.Logf("unknown host key: %v", err)
	want := knownhosts.Line([]string{knownhosts.Normalize(srv.addr)}, srv.hostKey.PublicKey())
	if !errors.Is(err, ErrUnknownHostKey) || !strings.Contains(err.Error(), "host db1") || !strings.Contains(err.Error(), want) {
		t.Errorf("unknown host key: want the host and the line to add (%s), got %v", want, err)
	}
	if _, err := DialSSH(ctx, SSHConfig{Name: "db1", Addr: srv.addr, User: "u", KeyFile: key,
		KnownHosts: filepath.Join(t.TempDir(), "absent")}); !errors.Is(err, ErrUnknownHostKey) {
		t.Errorf("no known_hosts file: %v", err)
	}

	other := newSigner(t)
	wrong := writeKnownHosts(t, "# first line", knownhosts.Line([]string{srv.addr}, other.PublicKey()))
	_, err = DialSSH(ctx, SSHConfig{Name: "db1", Addr: srv.addr, User: "u", KeyFile: key, KnownHosts: wrong})
	t.Logf("mismatch: %v", err)
	if !errors.Is(err, ErrHostKeyMismatch) || !strings.Contains(err.Error(), wrong+":2") ||
		!strings.Contains(err.Error(), ssh.FingerprintSHA256(other.PublicKey())) {
		t.Errorf("host key mismatch: want the file:line and the expected fingerprint, got %v", err)
	}

	h, err := DialSSH(ctx, SSHConfig{Name: "db1", Addr: srv.addr, User: "u", KeyFile: key, KnownHosts: wrong, InsecureHostKey: true})
	if err != nil {
		t.Errorf("--insecure-host-key: %v", err)
	} else {
		h.Close()
	}
}

func TestSSHAuthAndReachErrors(t *testing.T) {
	_, signer, _ := clientKey(t)
	srv := startTestSSHServer(t, signer.PublicKey())
	kh := writeKnownHosts(t, knownhosts.Line([]string{srv.addr}, srv.hostKey.PublicKey()))
	ctx := context.Background()

	otherKey, _, _ := clientKey(t)
	_, err := DialSSH(ctx, SSHConfig{Name: "db1", Addr: srv.addr, User: "u", KeyFile: otherKey, KnownHosts: kh})
	t.Logf("wrong key: %v", err)
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "host db1") || !strings.Contains(err.Error(), otherKey) {
		t.Errorf("wrong key: %v", err)
	}

	_, err = DialSSH(ctx, SSHConfig{Name: "db1", Addr: srv.addr, User: "u", KnownHosts: kh})
	if !errors.Is(err, ErrNoKey) {
		t.Errorf("no key and no agent: %v", err)
	}

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln.Addr().String()
	ln.Close()
	_, err = DialSSH(ctx, SSHConfig{Name: "db1", Addr: closed, User: "u", KeyFile: otherKey, KnownHosts: kh, Timeout: 2 * time.Second})
	t.Logf("unreachable: %v", err)
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "host db1") {
		t.Errorf("closed port: %v", err)
	}
}

func TestSSHAgentAuth(t *testing.T) {
	_, signer, authorized := clientKey(t)
	srv := startTestSSHServer(t, signer.PublicKey())
	kh := writeKnownHosts(t, knownhosts.Line([]string{srv.addr}, srv.hostKey.PublicKey()))
	keyring := agent.NewKeyring()
	_, _, other := clientKey(t)
	if err := keyring.Add(agent.AddedKey{PrivateKey: other}); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _ = agent.ServeAgent(keyring, c); c.Close() }()
		}
	}()
	_, err = DialSSH(context.Background(), SSHConfig{Name: "db1", Addr: srv.addr, User: "u", AgentSocket: sock, KnownHosts: kh})
	if !errors.Is(err, ErrAuth) {
		t.Errorf("agent without the authorized key: want ErrAuth, got %v", err)
	}
	_ = keyring.Add(agent.AddedKey{PrivateKey: authorized})
	h := dialTest(t, SSHConfig{Name: "db1", Addr: srv.addr, User: "u", AgentSocket: sock, KnownHosts: kh})
	if out, err := h.Run(context.Background(), "echo", "ok"); err != nil || string(out) != "ok\n" {
		t.Errorf("Run over agent auth: %q, %v", out, err)
	}
}

// A server with an ECDSA and an Ed25519 host key, known_hosts with the Ed25519 one only:
// the client prefers ECDSA, so it must ask for the type known_hosts has instead of
// calling it a mismatch.
func TestSSHHostKeyOfAnotherTypeIsNotAMismatch(t *testing.T) {
	key, signer, _ := clientKey(t)
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecSigner, _ := ssh.NewSignerFromKey(ec)
	srv := startTestSSHServer(t, signer.PublicKey(), ecSigner)
	kh := writeKnownHosts(t, knownhosts.Line([]string{srv.addr}, srv.hostKey.PublicKey()))
	h := dialTest(t, SSHConfig{Name: "db1", Addr: srv.addr, User: "u", KeyFile: key, KnownHosts: kh})
	if out, err := h.Run(context.Background(), "echo", "ok"); err != nil || string(out) != "ok\n" {
		t.Errorf("Run: %q, %v", out, err)
	}
	// With only the ECDSA key known, the first offer is the known key.
	kh2 := writeKnownHosts(t, knownhosts.Line([]string{srv.addr}, ecSigner.PublicKey()))
	dialTest(t, SSHConfig{Name: "db1", Addr: srv.addr, User: "u", KeyFile: key, KnownHosts: kh2})
}
