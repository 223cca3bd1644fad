package mariadb

import (
	"cmp"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/dbserver"
	"github.com/wirelab/wirelab/internal/execx"
)

// Defaults applied by Start when a Config field is zero.
const (
	DefaultPort           = 3306
	DefaultBufferPool     = "1G"
	DefaultMaxConnections = 4200
	DefaultBinlogFormat   = "ROW"
	DefaultReadyTimeout   = 60 * time.Second
	DefaultStopTimeout    = 60 * time.Second

	// BenchUser and BenchDB are what sysbench connects as and to.
	BenchUser = "sbtest"
	BenchDB   = "sbtest"
)

// Config describes one server. Dir must exist and belong to the caller: the datadir,
// socket, my.cnf, certificates and logs all live under it.
type Config struct {
	NS           string // network namespace to run mariadbd in; "" = this one
	Dir          string // base directory (exists; we own it)
	BindAddress  string // e.g. "198.18.0.2"; the unix socket is always there too
	Port         int    // default 3306
	ServerID     int    // server_id; set distinct ids on primary and replica
	LogBin       bool   // binary log (needed on a replication primary)
	BinlogFormat string // default ROW when LogBin
	GTID         bool   // gtid_strict_mode (MariaDB always writes GTIDs in its binlog)
	BufferPool   string // innodb_buffer_pool_size, default 1G: data must live in memory
	// MaxConnections is max_connections and back_log, default 4200 so 2048+ sysbench
	// threads can all connect within sysbench's 30 s connect window.
	MaxConnections int
	Extra          map[string]string // extra [mysqld] options (value "" = bare flag)
	Logger         *slog.Logger

	// Optional knobs (zero = default).
	Mariadbd     string        // path of mariadbd, default "mariadbd" from PATH or /usr/sbin
	ReadyTimeout time.Duration // default 60 s
	StopTimeout  time.Duration // graceful shutdown before SIGKILL, default 60 s
	Runner       execx.Runner  // runs mariadb-install-db and the mariadb client; default execx.OS
	Cgroup       string        // cgroup v2 directory mariadbd starts in ("" = this process's)
}

// layout is where a server keeps its files under Config.Dir.
type layout struct {
	dbserver.Dirs
	TmpDir, Socket, PidFile, ErrorLog, MyCnf, Stdout string
}

func newLayout(dir string) layout {
	return layout{
		Dirs:     dbserver.DirsIn(dir),
		TmpDir:   filepath.Join(dir, "tmp"),
		Socket:   filepath.Join(dir, "mysqld.sock"),
		PidFile:  filepath.Join(dir, "mysqld.pid"),
		ErrorLog: filepath.Join(dir, "error.log"),
		MyCnf:    filepath.Join(dir, "my.cnf"),
		Stdout:   filepath.Join(dir, "mariadbd.out"),
	}
}

// PathsIn are the socket and the certificate directory of a server started in dir: where
// a plan (a dry run) says its clients will find them before it runs.
func PathsIn(dir string) (socket, certDir string) {
	l := newLayout(dir)
	return l.Socket, l.CertDir
}

// withDefaults fills the zero fields with the defaults.
func (c Config) withDefaults() Config {
	c.Port, c.BufferPool = cmp.Or(c.Port, DefaultPort), cmp.Or(c.BufferPool, DefaultBufferPool)
	c.MaxConnections = cmp.Or(c.MaxConnections, DefaultMaxConnections)
	c.BinlogFormat = cmp.Or(c.BinlogFormat, DefaultBinlogFormat)
	c.ReadyTimeout, c.StopTimeout = cmp.Or(c.ReadyTimeout, DefaultReadyTimeout), cmp.Or(c.StopTimeout, DefaultStopTimeout)
	c.Logger = cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	c.Runner = cmp.Or[execx.Runner](c.Runner, execx.OS{})
	return c
}

func (c Config) validate() error {
	return dbserver.Config{Engine: "mariadb", Dir: c.Dir, Bind: c.BindAddress, Port: c.Port,
		Socket: newLayout(c.Dir).Socket, Extra: c.Extra}.Check()
}

// myCnf renders the server's option file. It is read with --defaults-file, so nothing
// from /etc/mysql leaks in.
//
// innodb_flush_log_at_trx_commit=2 writes the redo log at each commit but fsyncs it once a
// second: the lab measures the network, and a disk fsync per commit would make write
// workloads measure the disk instead. A crash can lose up to a second of commits, which
// does not matter for a throw-away lab database.
func myCnf(c Config, l layout) string {
	var b strings.Builder
	w := func(k string, v any) { fmt.Fprintf(&b, "%s = %v\n", k, v) }
	flag := func(k string) { fmt.Fprintf(&b, "%s\n", k) }

	b.WriteString("# written by wirelab; read with --defaults-file\n[mysqld]\n")
	w("user", "mysql")
	w("datadir", l.DataDir)
	// Our own tmpdir: a shared /tmp lets other programs' cleanups delete the server's
	// temporary tables under it (seen: "Error on delete of '/tmp/#sql-temptable-...'").
	w("tmpdir", l.TmpDir)
	w("socket", l.Socket)
	w("port", c.Port)
	w("bind-address", c.BindAddress)
	w("pid-file", l.PidFile)
	w("log-error", l.ErrorLog)
	flag("skip-name-resolve")
	flag("skip-external-locking")
	w("performance_schema", "OFF")

	w("innodb_buffer_pool_size", c.BufferPool)
	w("innodb_flush_log_at_trx_commit", 2)
	w("innodb_buffer_pool_dump_at_shutdown", "OFF")
	w("innodb_buffer_pool_load_at_startup", "OFF")

	w("max_connections", c.MaxConnections)
	w("back_log", c.MaxConnections)
	w("thread_cache_size", min(c.MaxConnections, 16384))
	w("table_open_cache", 4096)
	// sysbench prepares its statements per table per thread (server-side prepared
	// statements): 2048 threads x 10 tables x ~5-10 statements overflow the default 16382
	// (error 1461), which would change the query path mid-study.
	w("max_prepared_stmt_count", 1048576)
	// 4200 connections need more descriptors than the usual 1024/20000 default;
	// mariadbd raises its own limit while it is still root.
	w("open_files_limit", 65535)
	w("max_connect_errors", 1000000000)

	w("ssl-ca", filepath.Join(l.CertDir, "ca.pem"))
	w("ssl-cert", filepath.Join(l.CertDir, "server-cert.pem"))
	w("ssl-key", filepath.Join(l.CertDir, "server-key.pem"))

	if c.ServerID > 0 {
		w("server_id", c.ServerID)
	}
	w("relay_log", filepath.Join(l.DataDir, "relay-bin"))
	if c.LogBin {
		w("log_bin", filepath.Join(l.DataDir, "mysql-bin"))
		w("binlog_format", c.BinlogFormat)
		w("log_slave_updates", "ON")
		w("sync_binlog", 0)
	} else {
		flag("skip-log-bin")
	}
	if c.GTID {
		w("gtid_strict_mode", "ON")
	}

	for _, k := range slices.Sorted(maps.Keys(c.Extra)) {
		if v := c.Extra[k]; v == "" {
			flag(k)
		} else {
			w(k, v)
		}
	}
	return b.String()
}
