package mariadb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/wirelab/wirelab/internal/dbserver"
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
	proc        dbserver.Handle // the mariadbd started, or the one Pid names
}

// kind is every mariadbd: SIGTERM is a clean InnoDB shutdown.
var kind = dbserver.Kind{Label: "mariadb", Comm: []string{"mariadbd", "mysqld"}, Signal: syscall.SIGTERM,
	StopTimeout: DefaultStopTimeout}

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
	uid, gid, err := dbserver.UserIDs("mysql")
	if err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	if err := dbserver.CheckTraversable(cfg.Dir, "mysql"); err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	if _, err := os.Stat(filepath.Join(l.CertDir, CAFile)); err != nil {
		if err := GenerateCerts(l.CertDir, dbserver.ListenHosts(cfg.BindAddress)); err != nil {
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
	if err := dbserver.ChownTree(cfg.Dir, uid, gid); err != nil {
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
		dbserver.Abandon(ctx, s.Stop, cfg.StopTimeout, log)
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

func (s *Server) spawn(mariadbd string, l layout) (err error) {
	name, args := spawnArgv(s.NS, mariadbd, l)
	s.Pid, err = s.proc.Spawn(kind, l.Stdout, "", s.cgroup, s.logger, name, args...)
	return err
}

// readyProbe is the query that says a server takes work. It reads a table: a galera node
// answers a table-less SELECT 1 while it is still joining, but refuses table access
// (error 1047) until it is ready, and the bootstrap that follows reads mysql.user.
const readyProbe = "SELECT 1 FROM mysql.user LIMIT 1"

// waitReady polls the socket with readyProbe until it answers, mariadbd exits, or timeout.
func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	return s.proc.Process(kind, s.Pid).WaitReady(ctx, dbserver.Ready{Socket: s.Socket, Log: s.ErrorLog, Timeout: timeout,
		Every: 250 * time.Millisecond, Probe: func(ctx context.Context) error {
			_, err := s.Exec(ctx, readyProbe)
			return err
		}, NotReady: ErrNotReady})
}

// Stop shuts mariadbd down: SIGTERM (a clean InnoDB shutdown), then SIGKILL once the stop
// timeout passes or ctx ends. It is idempotent and safe on a nil Server, one rebuilt from
// a state file with only Pid set, and one whose process is already gone.
func (s *Server) Stop(ctx context.Context) error {
	if s == nil {
		return nil
	}
	return s.proc.Stop(ctx, kind, s.Pid, s.stopTimeout, s.logger)
}

// alive reports whether Pid is still a mariadbd (a recycled pid is not ours to kill).
func (s *Server) alive() bool { return s.proc.Process(kind, s.Pid).Alive() }

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

// Attach makes s, a server started elsewhere (by `wirelab agent mariadb` on another host)
// and described by its exported fields, one this process administers: runner runs the
// mariadb client where s.Socket is (on that host, as root), so Exec, Rows and the
// replication calls work on it. Stopping it stays the starter's business.
func Attach(s *Server, runner execx.Runner) *Server {
	s.runner = runner
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	return s
}
