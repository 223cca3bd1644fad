package hosts

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/crypto/ssh"
)

// testSSHServer is an SSH server on 127.0.0.1:0 inside the test: it accepts one public key
// and runs each exec request with sh -c on this machine, in a session of its own, as sshd
// would. Like OpenSSH's sshd it ignores a client's signal requests.
type testSSHServer struct {
	addr    string
	hostKey ssh.Signer
	wg      sync.WaitGroup
}

func newSigner(t *testing.T) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func startTestSSHServer(t *testing.T, authorized ssh.PublicKey, extraHostKeys ...ssh.Signer) *testSSHServer {
	t.Helper()
	srv := &testSSHServer{hostKey: newSigner(t)}
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(_ ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
		if bytes.Equal(k.Marshal(), authorized.Marshal()) {
			return nil, nil
		}
		return nil, errors.New("not authorized")
	}}
	cfg.AddHostKey(srv.hostKey)
	for _, k := range extraHostKeys {
		cfg.AddHostKey(k)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.addr = ln.Addr().String()
	t.Cleanup(func() { ln.Close(); srv.wg.Wait() })
	srv.wg.Add(1)
	go func() {
		defer srv.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			srv.wg.Add(1)
			go func() { defer srv.wg.Done(); srv.serve(c, cfg) }()
		}
	}()
	return srv
}

func (srv *testSSHServer) serve(c net.Conn, cfg *ssh.ServerConfig) {
	defer c.Close()
	_, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	var wg sync.WaitGroup
	defer wg.Wait()
	for nc := range chans {
		ch, reqs, err := nc.Accept()
		if err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer ch.Close()
			for r := range reqs {
				if r.Type != "exec" {
					_ = r.Reply(false, nil)
					continue
				}
				_ = r.Reply(true, nil)
				n := binary.BigEndian.Uint32(r.Payload)
				cmd := exec.Command("sh", "-c", string(r.Payload[4:4+n]))
				cmd.Stdin, cmd.Stdout, cmd.Stderr = ch, ch, ch.Stderr()
				// sshd makes each session's command a session leader.
				cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
				code := 0
				if err := cmd.Run(); err != nil {
					code = 1
					var xe *exec.ExitError
					if errors.As(err, &xe) {
						code = xe.ExitCode()
					}
				}
				_, _ = ch.SendRequest("exit-status", false, binary.BigEndian.AppendUint32(nil, uint32(code)))
				return
			}
		}()
	}
}

// clientKey writes a fresh private key file and returns it, its signer and the key.
func clientKey(t *testing.T) (string, ssh.Signer, ed25519.PrivateKey) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(path, pem.EncodeToMemory(blk), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := ssh.NewSignerFromKey(priv)
	return path, s, priv
}

func writeKnownHosts(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "known_hosts")
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func dialTest(t *testing.T, cfg SSHConfig) *SSH {
	t.Helper()
	h, err := DialSSH(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}
