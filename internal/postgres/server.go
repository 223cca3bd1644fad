package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/wirelab/wirelab/internal/dbserver"
	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/pki"
)

// ErrNotReady means the postmaster did not accept a query on its socket in time (or
// exited early); the error text carries the tail of its log.
var ErrNotReady = errors.New("postgres not ready")

// Server is a running postmaster. The exported fields are what clients need to connect
// and what a state file needs to stop it later: a Server rebuilt from a state file with
// Pid set can still be stopped with Stop.
type Server struct {
	NS        string // network namespace it runs in ("" = this one)
	Dir       string // base directory given in Config
	SocketDir string // libpq's host for the unix socket (a file: reachable from any netns)
	Host      string // TCP address clients use (the first listen address)
	Port      int
	User      string // bench user: password (SCRAM) over TCP, with or without TLS, and socket
	Password  string
	DB        string
	CertDir   string // ca.pem, server-*.pem, client-*.pem
	Pid       int    // the postmaster's pid (ip netns exec and setpriv exec, so not theirs)
	DataDir   string
	Log       string // the postmaster's stderr
	Version   string // "PostgreSQL " + server_version, e.g. "PostgreSQL 15.18 (Debian 15.18-0+deb12u1)"

	binDir      string
	osUser      string
	logger      *slog.Logger
	runner      execx.Runner
	stopTimeout time.Duration
	cgroup      string          // cgroup v2 directory the server starts in
	proc        dbserver.Handle // the postmaster started, or the one Pid names
}

// Start initialises the datadir under cfg.Dir unless it already holds one (initdb, or
// for a replica a base backup of cfg.Upstream), writes the configuration and certificates, starts the postmaster as cfg.OSUser inside cfg.NS,
// waits until it answers on its socket and creates the bench user and database. On any
// failure after the process started it stops the server again, so the caller has
// nothing to clean up but cfg.Dir.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	l := newLayout(cfg.Dir)
	log := cfg.Logger.With("component", "postgres", "ns", cfg.NS, "dir", cfg.Dir)
	binDir := cfg.BinDir
	if binDir == "" {
		var err error
		if binDir, err = FindBinDir(); err != nil {
			return nil, fmt.Errorf("start postgres: %w", err)
		}
	}
	if err := prepareDir(cfg, l); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	if _, err := os.Stat(filepath.Join(l.DataDir, "PG_VERSION")); err != nil {
		if err := createDataDir(ctx, cfg, binDir, l, log); err != nil {
			return nil, fmt.Errorf("start postgres: %w", err)
		}
	}

	s := &Server{
		NS: cfg.NS, Dir: cfg.Dir, SocketDir: l.SocketDir, Host: listenAddresses(cfg.BindAddress)[0],
		Port: cfg.Port, User: BenchUser, DB: BenchDB, CertDir: l.CertDir, DataDir: l.DataDir, Log: l.Log,
		binDir: binDir, osUser: cfg.OSUser, logger: log, runner: cfg.Runner, stopTimeout: cfg.StopTimeout, cgroup: cfg.Cgroup,
	}
	if err := s.spawn(l); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	fail := func(err error) (*Server, error) {
		dbserver.Abandon(ctx, s.Stop, cfg.StopTimeout, log)
		return nil, fmt.Errorf("start postgres in %q: %w", cfg.NS, err)
	}
	if err := s.waitReady(ctx, cfg.ReadyTimeout); err != nil {
		return fail(err)
	}
	if cfg.Upstream != nil {
		// A standby is read-only: the bench role and database come from the primary.
		s.Password = cfg.Upstream.BenchPassword
		if err := s.readVersion(ctx, cfg.MaxConnections); err != nil {
			return fail(err)
		}
	} else if err := s.bootstrap(ctx, cfg.MaxConnections); err != nil {
		return fail(err)
	}
	log.Info("postgres ready", "pid", s.Pid, "version", s.Version, "addr",
		fmt.Sprintf("%s:%d", s.Host, s.Port), "socket_dir", s.SocketDir)
	return s, nil
}

// prepareDir writes certificates (unless there are some), the configuration files and
// the directories, and hands the tree to the OS user: the postmaster insists on owning
// its datadir and its TLS key.
func prepareDir(cfg Config, l layout) error {
	uid, gid, err := dbserver.UserIDs(cfg.OSUser)
	if err != nil {
		return fmt.Errorf("%w (the postgresql-15 package creates user postgres)", err)
	}
	if err := dbserver.CheckTraversable(cfg.Dir, cfg.OSUser); err != nil {
		return err
	}
	if err := installCerts(cfg, l); err != nil {
		return err
	}
	for path, text := range map[string]string{l.Conf: postgresqlConf(cfg, l), l.HBA: pgHBA(), l.Ident: ""} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	// The socket directory is 0700: only root and the OS user reach the socket, so the
	// peer-authenticated superuser stays local to them.
	if err := os.MkdirAll(l.SocketDir, 0o700); err != nil {
		return err
	}
	return dbserver.ChownTree(cfg.Dir, uid, gid)
}

// createDataDir makes a fresh datadir: initdb for a primary, a base backup taken over
// the wire (from inside cfg.NS) for a replica.
func createDataDir(ctx context.Context, cfg Config, binDir string, l layout, log *slog.Logger) error {
	if cfg.Upstream != nil {
		log.Info("taking base backup", "datadir", l.DataDir, "from", fmt.Sprintf("%s:%d", cfg.Upstream.Host, cfg.Upstream.Port))
		name, args := asUser(cfg.OSUser, filepath.Join(binDir, "pg_basebackup"), baseBackupArgs(*cfg.Upstream, l)...)
		if cfg.NS != "" {
			name, args = execx.InNetns(cfg.NS, name, args...)
		}
		if _, err := cfg.Runner.Run(ctx, name, args...); err != nil {
			return fmt.Errorf("base backup: %w", err)
		}
		return nil
	}
	log.Info("initialising datadir", "datadir", l.DataDir)
	name, args := asUser(cfg.OSUser, filepath.Join(binDir, "initdb"), initdbArgs(l)...)
	if _, err := cfg.Runner.Run(ctx, name, args...); err != nil {
		return fmt.Errorf("initdb: %w", err)
	}
	return nil
}

// installCerts copies cfg.CertDir's set under Dir, or generates a set when there is
// neither one to copy nor one from an earlier start.
func installCerts(cfg Config, l layout) error {
	if cfg.CertDir != "" {
		files := map[string][]byte{}
		for _, name := range []string{pki.CAFile, pki.ServerCertFile, pki.ServerKeyFile, pki.ClientCertFile, pki.ClientKeyFile} {
			b, err := os.ReadFile(filepath.Join(cfg.CertDir, name))
			if err != nil {
				return fmt.Errorf("copy certificates: %w", err)
			}
			files[name] = b
		}
		return pki.WriteFiles(l.CertDir, files)
	}
	if _, err := os.Stat(filepath.Join(l.CertDir, pki.CAFile)); err == nil {
		return nil
	}
	files, err := pki.ServerSet(dbserver.ListenHosts(cfg.BindAddress), BenchUser)
	if err != nil {
		return err
	}
	return pki.WriteFiles(l.CertDir, files)
}

// initdbArgs: --no-sync because a throw-away datadir need not survive a power cut;
// locale C and UTF8 make the server identical on every machine.
func initdbArgs(l layout) []string {
	return []string{"--pgdata=" + l.DataDir, "--username=" + superUser, "--auth-local=peer",
		"--auth-host=scram-sha-256", "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions"}
}

// asUser is the argv that runs bin as the unprivileged OS user. setpriv execs (unlike
// runuser, which forks), so a pid we get is the program's own.
func asUser(osUser, bin string, args ...string) (string, []string) {
	return "setpriv", append([]string{"--reuid=" + osUser, "--regid=" + osUser, "--init-groups", "--", bin}, args...)
}

// spawnArgv is the postmaster's command line, wrapped in `ip netns exec` for a namespace.
func spawnArgv(ns, osUser, binDir string, l layout) (string, []string) {
	name, args := asUser(osUser, filepath.Join(binDir, "postgres"), "--config-file="+l.Conf)
	if ns == "" {
		return name, args
	}
	return execx.InNetns(ns, name, args...)
}

func (s *Server) spawn(l layout) (err error) {
	name, args := spawnArgv(s.NS, s.osUser, s.binDir, l)
	s.Pid, err = s.proc.Spawn(kind, l.Log, l.Dir, s.cgroup, s.logger, name, args...)
	return err
}

// waitReady runs SELECT 1 over the socket until it answers, the postmaster exits, or
// timeout. Until recovery ends the server answers "the database system is starting up".
func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	return s.proc.Process(kind, s.Pid).WaitReady(ctx, dbserver.Ready{Socket: socketPath(s.SocketDir, s.Port), Log: s.Log,
		Timeout: timeout, Every: 200 * time.Millisecond, Probe: func(ctx context.Context) error {
			_, err := s.psql(ctx, superUser, false, "SELECT 1")
			return err
		}, NotReady: ErrNotReady})
}
