package mariadb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
)

// ErrNotReady means mariadbd did not answer on its socket in time (or exited early); the
// error text carries the tail of the error log.
var ErrNotReady = errors.New("mariadb not ready")

// Server is a running mariadbd. The exported fields are what clients need to connect and
// what a state file needs to stop it later: a Server rebuilt from a state file with Pid set
// can still be stopped with Stop.
type Server struct {
	NS       string // network namespace it runs in ("" = this one)
	Dir      string // base directory given in Config
	Socket   string // unix socket (reachable from any namespace: it is a file)
	Host     string // TCP address clients use (the bind address)
	Port     int
	User     string // bench user, allowed from '%' and via the socket, TLS optional
	Password string
	DB       string
	CertDir  string // ca.pem, cacert.pem, client-cert.pem, client-key.pem, server-*.pem
	Pid      int    // mariadbd's pid (ip netns exec execs, so this is not ip's pid)
	DataDir  string
	ErrorLog string
	Version  string // SELECT VERSION(), e.g. "10.11.19-MariaDB-0+deb12u1"

	logger      *slog.Logger
	runner      execx.Runner
	stopTimeout time.Duration
	cgroup      string

	mu      sync.Mutex
	done    chan struct{} // closed when our child exits; nil when we did not start it
	stopped bool
}

// Start creates (or reuses) the datadir under cfg.Dir, writes my.cnf and certificates,
// starts mariadbd as user mysql inside cfg.NS, waits until it answers on its socket and
// creates the bench user and database. On any failure after the process started it stops
// the server again, so the caller has nothing to clean up but cfg.Dir.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	l := newLayout(cfg.Dir)
	log := cfg.Logger.With("component", "mariadb", "ns", cfg.NS, "dir", cfg.Dir)

	mariadbd, err := findBinary(cfg.Mariadbd, "mariadbd")
	if err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	uid, gid, err := mysqlIDs()
	if err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	if err := checkTraversable(cfg.Dir); err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	if _, err := os.Stat(filepath.Join(l.CertDir, CAFile)); err != nil {
		if err := GenerateCerts(l.CertDir, certHosts(cfg.BindAddress)); err != nil {
			return nil, fmt.Errorf("start mariadb: %w", err)
		}
	}
	if err := os.WriteFile(l.MyCnf, []byte(myCnf(cfg, l)), 0o644); err != nil {
		return nil, fmt.Errorf("start mariadb: write my.cnf: %w", err)
	}
	for _, d := range []string{l.DataDir, l.TmpDir} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, fmt.Errorf("start mariadb: %w", err)
		}
	}
	if err := chownTree(cfg.Dir, uid, gid); err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	if _, err := os.Stat(filepath.Join(l.DataDir, "mysql")); err != nil {
		log.Info("initialising datadir", "datadir", l.DataDir)
		if _, err := cfg.Runner.Run(ctx, "mariadb-install-db", installArgs(l)...); err != nil {
			return nil, fmt.Errorf("start mariadb: install db: %w", err)
		}
	}

	s := &Server{
		NS: cfg.NS, Dir: cfg.Dir, Socket: l.Socket, Host: strings.TrimSpace(strings.Split(cfg.BindAddress, ",")[0]), Port: cfg.Port,
		User: BenchUser, DB: BenchDB, CertDir: l.CertDir, DataDir: l.DataDir, ErrorLog: l.ErrorLog,
		logger: log, runner: cfg.Runner, stopTimeout: cfg.StopTimeout, cgroup: cfg.Cgroup,
	}
	if err := s.spawn(mariadbd, l); err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	fail := func(err error) (*Server, error) {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.StopTimeout+5*time.Second)
		defer cancel()
		if serr := s.Stop(stopCtx); serr != nil {
			log.Warn("stop after failed start", "err", serr)
		}
		return nil, fmt.Errorf("start mariadb in %q: %w", cfg.NS, err)
	}
	if err := s.waitReady(ctx, cfg.ReadyTimeout); err != nil {
		return fail(err)
	}
	if err := s.bootstrap(ctx, cfg.MaxConnections); err != nil {
		return fail(err)
	}
	log.Info("mariadb ready", "pid", s.Pid, "version", s.Version, "addr",
		fmt.Sprintf("%s:%d", s.Host, s.Port), "socket", s.Socket)
	return s, nil
}

func installArgs(l layout) []string {
	// --no-defaults must come first. --skip-test-db also skips the anonymous users; root
	// authenticates with unix_socket, so root never has a (empty) password over TCP.
	// --tmpdir is passed on to the bootstrap mariadbd.
	return []string{"--no-defaults", "--datadir=" + l.DataDir, "--user=mysql",
		"--auth-root-authentication-method=socket", "--skip-test-db", "--skip-name-resolve",
		"--tmpdir=" + l.TmpDir}
}

// spawnArgv is the command line of mariadbd, wrapped in `ip netns exec` for a namespace.
func spawnArgv(ns, mariadbd string, l layout) (string, []string) {
	args := []string{"--defaults-file=" + l.MyCnf, "--user=mysql"}
	if ns == "" {
		return mariadbd, args
	}
	return execx.InNetns(ns, mariadbd, args...)
}

func (s *Server) spawn(mariadbd string, l layout) error {
	out, err := os.OpenFile(l.Stdout, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", l.Stdout, err)
	}
	defer out.Close()
	name, args := spawnArgv(s.NS, mariadbd, l)
	// Not CommandContext: the server outlives Start's context; Stop ends it.
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := execx.StartInCgroup(cmd, s.cgroup); err != nil {
		return fmt.Errorf("run %s: %w", name, err)
	}
	s.Pid = cmd.Process.Pid
	s.done = make(chan struct{})
	go func() {
		err := cmd.Wait()
		s.logger.Debug("mariadbd exited", "pid", s.Pid, "err", err)
		close(s.done)
	}()
	s.logger.Debug("mariadbd started", "pid", s.Pid, "argv", append([]string{name}, args...))
	return nil
}

// waitReady polls the socket with SELECT 1 until it answers, mariadbd exits, or timeout.
func (s *Server) waitReady(parent context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		if _, err := os.Stat(s.Socket); err == nil {
			qctx, qcancel := context.WithTimeout(ctx, 10*time.Second)
			_, lastErr = s.Exec(qctx, "SELECT 1")
			qcancel()
			if lastErr == nil {
				return nil
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("%w: mariadbd exited during startup; error log %s:\n%s",
				ErrNotReady, s.ErrorLog, tailFile(s.ErrorLog, 20))
		case <-ctx.Done():
			if parent.Err() != nil {
				return fmt.Errorf("wait for mariadb: %w", context.Cause(parent))
			}
			return fmt.Errorf("%w after %s (last error: %v); error log %s:\n%s",
				ErrNotReady, timeout, lastErr, s.ErrorLog, tailFile(s.ErrorLog, 20))
		case <-tick.C:
		}
	}
}

// Stop shuts mariadbd down: SIGTERM (a clean InnoDB shutdown), then SIGKILL once the stop
// timeout passes or ctx ends. It is idempotent and safe on a nil Server or one whose
// process is already gone.
func (s *Server) Stop(ctx context.Context) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.Pid <= 0 {
		return nil
	}
	log := s.logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	timeout := s.stopTimeout
	if timeout == 0 {
		timeout = DefaultStopTimeout
	}
	exited := s.exitWaiter()
	if !s.alive() {
		s.stopped = true
		return nil
	}
	if err := syscall.Kill(s.Pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop mariadb pid %d: %w", s.Pid, err)
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-exited:
		log.Info("mariadb stopped", "pid", s.Pid)
		s.stopped = true
		return nil
	case <-t.C:
	case <-ctx.Done():
	}
	log.Warn("mariadb did not stop in time; killing", "pid", s.Pid, "timeout", timeout)
	if err := syscall.Kill(s.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill mariadb pid %d: %w", s.Pid, err)
	}
	select {
	case <-exited:
		s.stopped = true
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("kill mariadb pid %d: still running after SIGKILL", s.Pid)
	}
}

// exitWaiter returns a channel closed when the process is gone: our child's Wait, or
// polling /proc for a server started by another wirelab process.
func (s *Server) exitWaiter() <-chan struct{} {
	if s.done != nil {
		return s.done
	}
	ch := make(chan struct{})
	go func() {
		for s.alive() {
			time.Sleep(100 * time.Millisecond)
		}
		close(ch)
	}()
	return ch
}

// alive reports whether Pid is still a mariadbd (a recycled pid is not ours to kill).
func (s *Server) alive() bool {
	if s.done != nil {
		select {
		case <-s.done:
			return false
		default:
			return true
		}
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(s.Pid), "stat"))
	if err != nil {
		return false
	}
	// /proc/pid/stat: "pid (comm) state ..."; a zombie ('Z') is gone for our purposes.
	st := string(b)
	i := strings.LastIndexByte(st, ')')
	if i < 0 || !strings.Contains(st[:i], "(mariadbd") && !strings.Contains(st[:i], "(mysqld") {
		return false
	}
	return !strings.HasPrefix(strings.TrimSpace(st[i+1:]), "Z")
}

func findBinary(explicit, name string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	p := filepath.Join("/usr/sbin", name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("find %s: not in PATH nor /usr/sbin", name)
	}
	return p, nil
}

func mysqlIDs() (int, int, error) {
	u, err := user.Lookup("mysql")
	if err != nil {
		return 0, 0, fmt.Errorf("look up user mysql: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return uid, gid, nil
}

// checkTraversable fails early when user mysql could not reach dir: t.TempDir() and
// os.MkdirTemp parents are 0700, and mariadbd would then die with a vague error.
func checkTraversable(dir string) error {
	for d := filepath.Dir(filepath.Clean(dir)); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("check %s: %w", d, err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("user mysql cannot traverse %s (mode %v): put Dir under a world-searchable path", d, fi.Mode().Perm())
		}
		if d == "/" {
			return nil
		}
	}
}

func chownTree(dir string, uid, gid int) error {
	return filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(p, uid, gid); err != nil {
			return fmt.Errorf("chown %s to mysql: %w", p, err)
		}
		return nil
	})
}

// certHosts are the bind addresses worth a SAN; MariaDB ≥ 10.11 takes a comma list.
func certHosts(bind string) []string {
	var out []string
	for _, a := range strings.Split(bind, ",") {
		switch a = strings.TrimSpace(a); a {
		case "0.0.0.0", "::", "*", "":
		default:
			out = append(out, a)
		}
	}
	return out
}

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
