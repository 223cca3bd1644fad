package hosts

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

// authMethods returns the key file's signer first, then the agent's keys. The returned
// func closes the agent connection once the handshake is over.
func authMethods(cfg SSHConfig) ([]ssh.AuthMethod, func(), error) {
	var signers []ssh.Signer
	if cfg.KeyFile != "" {
		b, err := os.ReadFile(cfg.KeyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("host %s: read key file: %w: fix key in the inventory", cfg.Name, err)
		}
		sg, err := ssh.ParsePrivateKey(b)
		var pm *ssh.PassphraseMissingError
		switch {
		case errors.As(err, &pm) && cfg.AgentSocket != "":
			// The agent may hold it; the handshake says if not.
		case errors.As(err, &pm):
			return nil, nil, fmt.Errorf("host %s: key file %s has a passphrase: %w: load it into ssh-agent (ssh-add %s) and run with SSH_AUTH_SOCK set",
				cfg.Name, cfg.KeyFile, ErrNoKey, cfg.KeyFile)
		case err != nil:
			return nil, nil, fmt.Errorf("host %s: key file %s: %w: want an OpenSSH or PEM private key", cfg.Name, cfg.KeyFile, err)
		default:
			signers = append(signers, sg)
		}
	}
	closeFn := func() {}
	var methods []ssh.AuthMethod
	if len(signers) > 0 {
		methods = append(methods, ssh.PublicKeys(signers...))
	}
	if cfg.AgentSocket != "" {
		conn, err := net.Dial("unix", cfg.AgentSocket)
		if err != nil && len(signers) == 0 {
			return nil, nil, fmt.Errorf("host %s: ssh-agent at SSH_AUTH_SOCK=%s: %w: %w: start ssh-agent or set key in the inventory",
				cfg.Name, cfg.AgentSocket, ErrNoKey, err)
		}
		if err == nil {
			methods = append(methods, ssh.PublicKeysCallback(agent.NewClient(conn).Signers))
			closeFn = func() { conn.Close() }
		}
	}
	if len(methods) == 0 {
		return nil, nil, fmt.Errorf("host %s: %w: set key in the inventory or start ssh-agent (SSH_AUTH_SOCK)", cfg.Name, ErrNoKey)
	}
	return methods, closeFn, nil
}

// describeAuth names the keys offered, for the error when the host refuses them all.
func describeAuth(cfg SSHConfig) string {
	var s []string
	if cfg.KeyFile != "" {
		s = append(s, "key file "+cfg.KeyFile)
	}
	if cfg.AgentSocket != "" {
		s = append(s, "the agent's keys")
	}
	return strings.Join(s, " and ")
}

// hostKeyResult is what the host key check found: the error saying which known_hosts line
// to add or fix (the handshake's own error does not carry it), and, when known_hosts holds
// keys for the host but none of the offered type, those keys' algorithms to ask for.
type hostKeyResult func() (knownAlgos []string, err error)

// hostKeyCallback checks the host key against cfg.KnownHosts. A key that is not there, or
// differs, fails the handshake.
func hostKeyCallback(cfg SSHConfig) (ssh.HostKeyCallback, hostKeyResult, error) {
	none := func() ([]string, error) { return nil, nil }
	if cfg.InsecureHostKey {
		return ssh.InsecureIgnoreHostKey(), none, nil
	}
	if cfg.KnownHosts == "" {
		return nil, nil, fmt.Errorf("host %s: no known_hosts file to check the host key against: name one, or pass --insecure-host-key for a throwaway host", cfg.Name)
	}
	check, err := knownhosts.New(cfg.KnownHosts)
	if errors.Is(err, os.ErrNotExist) {
		check = func(string, net.Addr, ssh.PublicKey) error { return &knownhosts.KeyError{} }
	} else if err != nil {
		return nil, nil, fmt.Errorf("host %s: read known_hosts: %w", cfg.Name, err)
	}
	var mu sync.Mutex
	var found error
	var algos []string
	cb := func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		err := check(hostname, remote, key)
		var ke *knownhosts.KeyError
		if !errors.As(err, &ke) {
			return err
		}
		e := hostKeyError(cfg, hostname, key, ke)
		mu.Lock()
		defer mu.Unlock()
		found, algos = e, otherTypeAlgos(key, ke.Want)
		return e
	}
	return cb, func() ([]string, error) { mu.Lock(); defer mu.Unlock(); return algos, found }, nil
}

// otherTypeAlgos returns the host key algorithms of the known keys when none of them has
// the offered key's type: the server offered a type known_hosts does not list for it (it
// prefers ecdsa, known_hosts has ed25519), which is not a mismatch; asking for the known
// types settles it, as OpenSSH's client does.
func otherTypeAlgos(offered ssh.PublicKey, want []knownhosts.KnownKey) []string {
	var algos []string
	for _, w := range want {
		if w.Key.Type() == offered.Type() {
			return nil
		}
		if w.Key.Type() == ssh.KeyAlgoRSA {
			algos = append(algos, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256)
		}
		algos = append(algos, w.Key.Type())
	}
	return algos
}

// hostKeyError says what the host offered and the known_hosts line that would accept it.
func hostKeyError(cfg SSHConfig, hostname string, key ssh.PublicKey, ke *knownhosts.KeyError) error {
	line := knownhosts.Line([]string{knownhosts.Normalize(hostname)}, key)
	fp := ssh.FingerprintSHA256(key)
	if len(ke.Want) == 0 {
		return fmt.Errorf("host %s: %w: %s offered %s key %s; after checking that fingerprint on the host (ssh-keygen -lf /etc/ssh/ssh_host_%s_key.pub), add this line to %s:\n  %s\nor pass --insecure-host-key for a throwaway host",
			cfg.Name, ErrUnknownHostKey, cfg.Addr, key.Type(), fp, keyFileKind(key), cfg.KnownHosts, line)
	}
	w := ke.Want[0]
	return fmt.Errorf("host %s: %w: %s offered %s key %s but %s:%d has %s %s; if the host was reinstalled, replace that line with:\n  %s\notherwise someone may be intercepting the connection",
		cfg.Name, ErrHostKeyMismatch, cfg.Addr, key.Type(), fp, w.Filename, w.Line, w.Key.Type(), ssh.FingerprintSHA256(w.Key), line)
}

// keyFileKind is the middle of the host key file name sshd keeps a key type in.
func keyFileKind(key ssh.PublicKey) string {
	switch key.Type() {
	case ssh.KeyAlgoED25519:
		return "ed25519"
	case ssh.KeyAlgoRSA:
		return "rsa"
	default:
		return "ecdsa"
	}
}
