package postgres

import (
	"cmp"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/dbserver"
	"github.com/wirelab/wirelab/internal/execx"
)

// Defaults applied by Start when a Config field is zero.
const (
	DefaultPort          = 5432
	DefaultSharedBuffers = "1GB"
	// DefaultMaxConnections lets 2048 sysbench threads (or pgbench clients) connect at
	// once, plus superuser_reserved_connections and the WAL senders of a replica. Every
	// connection is a backend process of about 2-10 MB, so 2048 clients need up to ~20 GB:
	// that, not this setting, is the practical ceiling on a small machine.
	DefaultMaxConnections = 2100
	DefaultReadyTimeout   = 60 * time.Second
	DefaultStopTimeout    = 30 * time.Second
	// DefaultOSUser runs initdb, the postmaster and the admin psql. The Debian packages
	// create it; PostgreSQL refuses to run as root.
	DefaultOSUser = "postgres"

	// BenchUser and BenchDB are what sysbench and pgbench connect as and to.
	BenchUser = "sbtest"
	BenchDB   = "sbtest"
	// superUser is the role initdb creates; it logs in only over the socket by peer
	// authentication (OS user postgres), never over TCP.
	superUser = "postgres"
)

// Config describes one server. Dir must exist and belong to the caller: the datadir,
// socket directory, configuration files, certificates and log all live under it.
type Config struct {
	NS          string // network namespace to run the postmaster in; "" = this one
	Dir         string // base directory (exists; we own it)
	BindAddress string // listen addresses, comma separated, e.g. "198.18.0.2,127.0.0.1"
	Port        int    // default 5432
	// SharedBuffers is shared_buffers, default 1GB: the data must live in memory, the
	// lab measures the network and not the disk.
	SharedBuffers  string
	MaxConnections int               // default 2100, see DefaultMaxConnections
	Extra          map[string]string // more postgresql.conf settings; they override ours
	Logger         *slog.Logger
	// CertDir holds an existing certificate set (pki.ServerSet's file names), e.g. the
	// lab's, whose server certificate names BindAddress. Start copies it under Dir, because
	// the server must own its key. "" = generate a new set.
	CertDir string
	// Upstream makes this server a streaming replica of another: a fresh datadir is a
	// base backup of it instead of initdb. See repl.go.
	Upstream *Upstream

	// Optional knobs (zero = default).
	BinDir       string        // PostgreSQL's bin directory, default: see FindBinDir
	OSUser       string        // OS user that runs the server, default "postgres"
	ReadyTimeout time.Duration // default 60 s
	StopTimeout  time.Duration // fast shutdown before SIGKILL, default 30 s
	Runner       execx.Runner  // runs initdb and psql; default execx.OS
	Cgroup       string        // cgroup v2 directory the server starts in ("" = this process's)
}

// layout is where a server keeps its files under Config.Dir.
type layout struct {
	dbserver.Dirs
	SocketDir, Conf, HBA, Ident, Log string
}

func newLayout(dir string) layout {
	return layout{
		Dirs:      dbserver.DirsIn(dir),
		SocketDir: filepath.Join(dir, "run"),
		Conf:      filepath.Join(dir, "postgresql.conf"),
		HBA:       filepath.Join(dir, "pg_hba.conf"),
		Ident:     filepath.Join(dir, "pg_ident.conf"),
		Log:       filepath.Join(dir, "postgres.log"),
	}
}

// PathsIn are the socket directory (libpq's host for the unix socket) and the certificate
// directory a server started with Config.Dir dir uses: what a plan names before the
// server runs (a dry run on real hosts).
func PathsIn(dir string) (socketDir, certDir string) {
	l := newLayout(dir)
	return l.SocketDir, l.CertDir
}

// socketPath is the unix socket the postmaster creates in its socket directory.
func socketPath(socketDir string, port int) string {
	return filepath.Join(socketDir, ".s.PGSQL."+strconv.Itoa(port))
}

// withDefaults fills the zero fields with the defaults.
func (c Config) withDefaults() Config {
	c.Port, c.SharedBuffers = cmp.Or(c.Port, DefaultPort), cmp.Or(c.SharedBuffers, DefaultSharedBuffers)
	c.MaxConnections, c.OSUser = cmp.Or(c.MaxConnections, DefaultMaxConnections), cmp.Or(c.OSUser, DefaultOSUser)
	c.ReadyTimeout, c.StopTimeout = cmp.Or(c.ReadyTimeout, DefaultReadyTimeout), cmp.Or(c.StopTimeout, DefaultStopTimeout)
	c.Logger = cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	c.Runner = cmp.Or[execx.Runner](c.Runner, execx.OS{})
	return c
}

// validate checks what every engine checks (dbserver.Config: a key of postgresql.conf
// has no space, '=' or quote) and a replica's upstream.
func (c Config) validate() error {
	err := dbserver.Config{Engine: "postgres", Dir: c.Dir, Bind: c.BindAddress, Port: c.Port,
		Socket: socketPath(newLayout(c.Dir).SocketDir, c.Port), Extra: c.Extra, BadKeyChars: " ='"}.Check()
	if u := c.Upstream; err == nil && u != nil && (u.Host == "" || u.Port < 1 || u.Port > 65535 || u.User == "") {
		return fmt.Errorf("postgres config: upstream needs host, port and user, got %s:%d as %q", u.Host, u.Port, u.User)
	}
	return err
}

// listenAddresses splits a comma list and drops empties.
func listenAddresses(bind string) []string {
	var out []string
	for _, a := range strings.Split(bind, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// postgresqlConf renders the server's configuration file, read with --config-file, so
// the datadir's own postgresql.conf and /etc/postgresql are never read.
//
// synchronous_commit=off is the counterpart of MariaDB's innodb_flush_log_at_trx_commit=2:
// a commit does not wait for its WAL fsync (the WAL writer flushes within ~3x
// wal_writer_delay), so write workloads measure the network rather than the disk. A crash
// loses at most those last commits, never consistency; the lab's database is throw-away.
func postgresqlConf(c Config, l layout) string {
	var b strings.Builder
	w := func(k string, v any) { fmt.Fprintf(&b, "%s = %s\n", k, confValue(v)) }

	b.WriteString("# written by wirelab; read with --config-file\n")
	w("data_directory", l.DataDir)
	w("hba_file", l.HBA)
	w("ident_file", l.Ident)
	w("external_pid_file", "")
	w("listen_addresses", strings.Join(listenAddresses(c.BindAddress), ","))
	w("port", c.Port)
	w("unix_socket_directories", l.SocketDir)
	w("max_connections", c.MaxConnections)
	w("superuser_reserved_connections", 3)
	w("password_encryption", "scram-sha-256")

	w("ssl", "on")
	w("ssl_cert_file", filepath.Join(l.CertDir, "server-cert.pem"))
	w("ssl_key_file", filepath.Join(l.CertDir, "server-key.pem"))
	w("ssl_ca_file", filepath.Join(l.CertDir, "ca.pem"))

	w("shared_buffers", c.SharedBuffers)
	w("synchronous_commit", "off")
	// Replication-ready: a replica can take a base backup and stream from any server.
	w("wal_level", "replica")
	w("max_wal_senders", 10)
	w("max_replication_slots", 10)
	w("wal_compression", "off")
	w("hot_standby", "on")

	// The postmaster's stderr goes to postgres.log in Dir; no collector process.
	w("logging_collector", "off")
	w("log_destination", "stderr")
	w("log_line_prefix", "%m [%p] ")
	w("lc_messages", "C")
	w("timezone", "UTC")
	w("log_timezone", "UTC")
	w("dynamic_shared_memory_type", "posix")

	for _, k := range slices.Sorted(maps.Keys(c.Extra)) {
		w(k, c.Extra[k]) // later lines win: extras override the defaults above
	}
	return b.String()
}

// confValue quotes strings for postgresql.conf; numbers stay bare.
func confValue(v any) string {
	if s, ok := v.(string); ok {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return fmt.Sprint(v)
}

// pgHBA is the client authentication file. The superuser logs in only over the socket as
// OS user postgres (peer); everyone else needs a password (SCRAM). "host" lines accept
// TLS and plain TCP alike: the studies compare both with the same user. The replication
// line is what a streaming replica connects with.
func pgHBA() string {
	return `# written by wirelab
# TYPE  DATABASE     USER      ADDRESS     METHOD
local   all          postgres              peer
local   all          all                   scram-sha-256
local   replication  all                   scram-sha-256
host    all          all       0.0.0.0/0   scram-sha-256
host    all          all       ::/0        scram-sha-256
host    replication  all       0.0.0.0/0   scram-sha-256
host    replication  all       ::/0        scram-sha-256
`
}
