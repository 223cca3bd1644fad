package hosts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/wirelab/wirelab/internal/execx"
)

// SSHConfig says how to reach one host over SSH.
type SSHConfig struct {
	Name string // the inventory's name for the host; errors start with it
	Addr string // host or host:port (port 22 when absent)
	User string
	// KeyFile is a private key file; "" uses the agent only. A key protected by a
	// passphrase must be loaded into the agent instead.
	KeyFile string
	// AgentSocket is the ssh-agent socket (SSH_AUTH_SOCK); "" = no agent.
	AgentSocket string
	// KnownHosts is the known_hosts file the host key is checked against.
	KnownHosts string
	// InsecureHostKey accepts any host key (--insecure-host-key): for throwaway hosts only.
	InsecureHostKey bool
	// Timeout bounds the TCP connect and the SSH handshake; 0 = 10 s.
	Timeout time.Duration
	// KeepAlive is how often a keepalive request checks the connection; 0 = 15 s. A
	// connection that does not answer within it is closed, so calls fail instead of hanging.
	KeepAlive time.Duration
	// Dial opens the TCP connection; nil = a plain dial. A jump host, or a test that
	// reaches a host inside a network namespace, plugs in here.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Sudo runs every command as root through `sudo -n` (never asking for a password): a
	// login user other than root with passwordless sudo. CheckLogin proves it works before
	// anything is changed; Login runs commands as the login user itself.
	Sudo bool
}

// Named errors callers (and tests) tell apart; each comes wrapped in a message naming the
// host and what to fix.
var (
	ErrUnreachable     = errors.New("host unreachable")
	ErrAuth            = errors.New("SSH authentication failed")
	ErrUnknownHostKey  = errors.New("host key not in known_hosts")
	ErrHostKeyMismatch = errors.New("host key does not match known_hosts")
	ErrNoKey           = errors.New("no SSH key")
)

// SSH is a host reached over one SSH connection; every call opens its own session on it.
type SSH struct {
	cfg    SSHConfig
	client *ssh.Client
	stop   chan struct{}
	once   sync.Once
}

// addrWithPort returns addr with port 22 when it has none.
func addrWithPort(addr string) string {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return addr
	}
	return net.JoinHostPort(strings.Trim(addr, "[]"), "22")
}

// DialSSH connects and authenticates to the host, checking its host key. Nothing on the
// host is changed.
func DialSSH(ctx context.Context, cfg SSHConfig) (*SSH, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 15 * time.Second
	}
	cfg.Addr = addrWithPort(cfg.Addr)
	auth, closeAuth, err := authMethods(cfg)
	if err != nil {
		return nil, err
	}
	defer closeAuth()
	var algos []string
	for attempt := 0; ; attempt++ {
		s, retry, err := dialOnce(ctx, cfg, auth, algos)
		if retry == nil || attempt > 0 {
			return s, err
		}
		algos = retry
	}
}

// dialOnce connects once, asking for host key algos when not nil. When the host offered a
// key type known_hosts does not list for it, it returns the known types to ask for.
func dialOnce(ctx context.Context, cfg SSHConfig, auth []ssh.AuthMethod, algos []string) (*SSH, []string, error) {
	hk, hkResult, err := hostKeyCallback(cfg)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	dial := cfg.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	conn, err := dial(ctx, "tcp", cfg.Addr)
	if err != nil {
		return nil, nil, fmt.Errorf("host %s: connect to %s: %w (%v): check the address and port in the inventory and that sshd runs there",
			cfg.Name, cfg.Addr, ErrUnreachable, err)
	}
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	cc, chans, reqs, err := ssh.NewClientConn(conn, cfg.Addr, &ssh.ClientConfig{
		User: cfg.User, Auth: auth, HostKeyCallback: hk, HostKeyAlgorithms: algos, Timeout: cfg.Timeout,
	})
	if err != nil {
		conn.Close()
		if retry, e := hkResult(); e != nil {
			return nil, retry, e
		}
		if strings.Contains(err.Error(), "unable to authenticate") {
			return nil, nil, fmt.Errorf("host %s: %s@%s refused %s: %w: add the public key to ~%s/.ssh/authorized_keys on the host, or fix user/key in the inventory",
				cfg.Name, cfg.User, cfg.Addr, describeAuth(cfg), ErrAuth, cfg.User)
		}
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("host %s: SSH handshake with %s timed out after %s: %w: is it an SSH server?",
				cfg.Name, cfg.Addr, cfg.Timeout, ErrUnreachable)
		}
		return nil, nil, fmt.Errorf("host %s: SSH handshake with %s: %w", cfg.Name, cfg.Addr, err)
	}
	_ = conn.SetDeadline(time.Time{})
	s := &SSH{cfg: cfg, client: ssh.NewClient(cc, chans, reqs), stop: make(chan struct{})}
	go s.keepAlive()
	return s, nil, nil
}

// keepAlive closes the connection when the server stops answering keepalive requests.
func (s *SSH) keepAlive() {
	t := time.NewTicker(s.cfg.KeepAlive)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		done := make(chan error, 1)
		go func() {
			_, _, err := s.client.SendRequest("keepalive@openssh.com", true, nil)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				continue
			}
		case <-time.After(s.cfg.KeepAlive):
		case <-s.stop:
			return
		}
		_ = s.client.Close()
		return
	}
}

// Name implements Host.
func (s *SSH) Name() string { return s.cfg.Name }

// Close implements Host.
func (s *SSH) Close() error {
	var err error
	s.once.Do(func() {
		close(s.stop)
		err = s.client.Close()
		if errors.Is(err, net.ErrClosed) {
			err = nil
		}
	})
	return err
}

// Run implements Host. The command line reaches the host's login shell with every word
// quoted, so argv means the same as in exec.
func (s *SSH) Run(ctx context.Context, argv ...string) ([]byte, error) {
	return s.exec(ctx, ShellJoin(argv), nil)
}

// exec runs one shell command line in a session of its own, as root: through `sudo -n`
// when the login user is not root.
func (s *SSH) exec(ctx context.Context, cmd string, stdin io.Reader) ([]byte, error) {
	return s.session(ctx, cmd, AsRoot(cmd, s.cfg.Sudo), stdin)
}

// AsRoot is the shell command line that runs cmd as root: cmd itself, or with sudo
// `sudo -n sh -c 'cmd'`, which fails at once instead of asking for a password.
func AsRoot(cmd string, sudo bool) string {
	if !sudo {
		return cmd
	}
	return "sudo -n sh -c " + ShellQuote(cmd)
}

// Login runs commands as the login user, never through sudo: the login pre-check.
func (s *SSH) Login() execx.Runner { return loginRunner{s} }

type loginRunner struct{ s *SSH }

func (r loginRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := ShellJoin(append([]string{name}, args...))
	return r.s.session(ctx, cmd, cmd, nil)
}

// session runs line in a session of its own; errors name cmd, the command as the caller
// gave it.
func (s *SSH) session(ctx context.Context, cmd, line string, stdin io.Reader) ([]byte, error) {
	sess, err := s.client.NewSession()
	if err != nil {
		return nil, fmt.Errorf("host %s: open an SSH session for %q: %w (connection lost?)", s.cfg.Name, cmd, err)
	}
	defer sess.Close()
	var out, stderr bytes.Buffer
	sess.Stdout, sess.Stderr, sess.Stdin = &out, &stderr, stdin
	done := make(chan error, 1)
	go func() { done <- sess.Run(line) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = sess.Signal(ssh.SIGKILL)
		_ = sess.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		return out.Bytes(), fmt.Errorf("host %s: %s: %w", s.cfg.Name, cmd, ctx.Err())
	}
	if err != nil {
		return out.Bytes(), fmt.Errorf("host %s: %s: %w: %s", s.cfg.Name, cmd, err, strings.TrimSpace(stderr.String()))
	}
	return out.Bytes(), nil
}

// Copy implements Host: the content streams into `cat` on the host, into a temp file
// renamed over path once complete, so a reader never sees half a file.
func (s *SSH) Copy(ctx context.Context, r io.Reader, path string, mode uint32) error {
	tmp := ShellQuote(path + ".wirelab-tmp")
	cmd := fmt.Sprintf("umask 077 && cat > %s && chmod %o %s && mv -f %s %s", tmp, mode&0o7777, tmp, tmp, ShellQuote(path))
	if _, err := s.exec(ctx, cmd, r); err != nil {
		return fmt.Errorf("copy to %s: %w", path, err)
	}
	return nil
}

// ReadFile implements Host.
func (s *SSH) ReadFile(ctx context.Context, path string) ([]byte, error) {
	return s.Run(ctx, "cat", "--", path)
}

// startScript starts argv in a new session (setsid -f: it forks, so the process is a
// session and group leader whatever the caller is), prints its pid on fd 3 — the SSH
// channel — and closes fd 3 before exec, so the session ends as soon as it started.
const startScript = `echo $$ >&3; exec "$0" "$@" 3>&-`

// Start implements Host. The process is detached from the SSH session: it survives the
// connection (the dead-man switch relies on that) and Stop kills its process group.
func (s *SSH) Start(ctx context.Context, name string, argv []string, logPath string) (Proc, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("host %s: start %s: empty command", s.cfg.Name, name)
	}
	cmd := fmt.Sprintf("setsid -f sh -c %s %s 3>&1 >>%s 2>&1 </dev/null",
		ShellQuote(startScript), ShellJoin(argv), ShellQuote(logPath))
	out, err := s.exec(ctx, cmd, nil)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || pid <= 1 {
		return nil, fmt.Errorf("host %s: start %s: no pid in %q", s.cfg.Name, name, out)
	}
	return &sshProc{s: s, name: name, pid: pid}, nil
}

type sshProc struct {
	s    *SSH
	name string
	pid  int
}

func (p *sshProc) Pid() int { return p.pid }

// stopScript is StopScript's shell form: TERM to the group, up to 5 s for it to go, KILL.
const stopScript = `p=%d; kill -TERM -$p 2>/dev/null || exit 0; i=0; while [ $i -lt 50 ]; do kill -0 -$p 2>/dev/null || exit 0; sleep 0.1; i=$((i+1)); done; kill -KILL -$p 2>/dev/null; exit 0`

func (p *sshProc) Stop(ctx context.Context) error {
	if _, err := p.s.exec(ctx, "sh -c "+ShellQuote(fmt.Sprintf(stopScript, p.pid)), nil); err != nil {
		return fmt.Errorf("stop %s (pid %d): %w", p.name, p.pid, err)
	}
	return nil
}

// DialSSHWait is DialSSH retried while the host is unreachable, for up to within: a host
// whose sshd is still starting (a test's, a machine booting). Any other error is final.
func DialSSHWait(ctx context.Context, cfg SSHConfig, within time.Duration) (*SSH, error) {
	deadline := time.Now().Add(within)
	for {
		h, err := DialSSH(ctx, cfg)
		if err == nil || !errors.Is(err, ErrUnreachable) || time.Now().After(deadline) {
			return h, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}
