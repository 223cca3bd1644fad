package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/wirelab/wirelab/internal/result"
)

// ExternalConfig is how to reach an existing MySQL/MariaDB server.
type ExternalConfig struct {
	DSN DSN
	// IP is the address the DSN's host resolved to: what the lab routes to and sysbench
	// dials, so a name is looked up once. "" = DSN.Host, which must then be an IP.
	IP       string
	Password string
	// PasswordFrom names where the password came from ("$WIRELAB_SERVER_PASSWORD",
	// "--server-password-file /etc/wl.pw"), for the hint of a refused login.
	PasswordFrom string
	Timeout      time.Duration // connect and query timeout; default 5s
	// CertDir holds what sysbench 1.0.20 needs for TLS to this server (its CA as
	// cacert.pem, a client-cert.pem and client-key.pem it trusts); "" = no TLS.
	CertDir string
}

// ErrLoginRefused means the server answered but refused the user, the password or the
// database: something the user fixes in the password or a GRANT, not a network problem.
var ErrLoginRefused = errors.New("the server refused the login")

// External is an existing server: wirelab did not start it, does not stop it and cannot see
// its host, so it has no pids (no server CPU is measured) and Stop leaves it running. Its
// SQL connection is from this machine's own namespace, not through the lab's wire.
type External struct {
	cfg     ExternalConfig
	db      *sql.DB
	version string
}

// OpenExternal logs in to the server (a ping with cfg.Timeout) and reads its version. A
// refused login wraps ErrLoginRefused and says what to fix; an unreachable server names
// the address.
func OpenExternal(ctx context.Context, cfg ExternalConfig) (*External, error) {
	x := UncheckedExternal(cfg, "")
	conn, err := mysql.NewConnector(x.mysqlConfig("tcp"))
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", cfg.DSN, err)
	}
	x.db = sql.OpenDB(conn)
	x.db.SetMaxOpenConns(2)
	if err := x.ping(ctx, x.db); err != nil {
		x.db.Close()
		return nil, err
	}
	if err := x.row(ctx, "SELECT VERSION()", &x.version); err != nil {
		x.db.Close()
		return nil, fmt.Errorf("server %s: read its version: %w", x.where(), err)
	}
	return x, nil
}

// UncheckedExternal is an External that has not logged in (no SQL connection: Facts and
// the table methods fail), for plans and tests; OpenExternal is the checked way.
func UncheckedExternal(cfg ExternalConfig, version string) *External {
	if cfg.IP == "" {
		cfg.IP = cfg.DSN.Host
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	return &External{cfg: cfg, version: version}
}

func (x *External) mysqlConfig(network string) *mysql.Config {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.DBName = x.cfg.DSN.User, x.cfg.Password, x.cfg.DSN.DB
	c.Net, c.Addr = network, net.JoinHostPort(x.cfg.IP, strconv.Itoa(x.cfg.DSN.Port))
	c.Timeout, c.ReadTimeout, c.WriteTimeout = x.cfg.Timeout, x.cfg.Timeout, x.cfg.Timeout
	return c
}

// where names the server in messages: the DSN's host:port, and the address it resolved
// to when that differs.
func (x *External) where() string {
	if x.cfg.IP != x.cfg.DSN.Host {
		return fmt.Sprintf("%s (%s)", x.cfg.DSN.Addr(), x.cfg.IP)
	}
	return x.cfg.DSN.Addr()
}

// ping logs in and says what to fix when that fails.
func (x *External) ping(ctx context.Context, db *sql.DB) error {
	ctx, cancel := context.WithTimeout(ctx, x.cfg.Timeout+time.Second)
	defer cancel()
	err := db.PingContext(ctx)
	if err == nil {
		return nil
	}
	d := x.cfg.DSN
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1045: // ER_ACCESS_DENIED_ERROR
			return fmt.Errorf("server %s refused the login of %q: %w (%s); check the password (%s) and that %q may log in from where wirelab connects (CREATE USER / GRANT ... TO %q@'<that address>' or '%%')",
				x.where(), d.User, ErrLoginRefused, me.Message, orUnset(x.cfg.PasswordFrom), d.User, d.User)
		case 1044, 1049: // ER_DBACCESS_DENIED_ERROR, ER_BAD_DB_ERROR
			return fmt.Errorf("server %s: database %q is not usable by %q: %w (%s); CREATE DATABASE %s and GRANT ALL ON %s.* TO %q (wirelab creates its sysbench tables there)",
				x.where(), d.DB, d.User, ErrLoginRefused, me.Message, d.DB, d.DB, d.User)
		case 1130: // ER_HOST_NOT_PRIVILEGED
			return fmt.Errorf("server %s does not let this machine in: %w (%s); GRANT %q a host pattern that covers it",
				x.where(), ErrLoginRefused, me.Message, d.User)
		}
		return fmt.Errorf("server %s: log in as %q: %w", x.where(), d.User, err)
	}
	return fmt.Errorf("server %s: cannot reach it: %w; is it listening on that address and port, and does no firewall drop this machine?", x.where(), err)
}

func orUnset(s string) string {
	if s == "" {
		return "none was given"
	}
	return s
}

func (x *External) row(ctx context.Context, q string, dst any, args ...any) error {
	if x.db == nil {
		return errors.New("not logged in")
	}
	ctx, cancel := context.WithTimeout(ctx, x.cfg.Timeout)
	defer cancel()
	return x.db.QueryRowContext(ctx, q, args...).Scan(dst)
}

// Kind is MariaDB: the server speaks MySQL's protocol, and sysbench's mysql driver.
func (x *External) Kind() Kind { return MariaDB }

// Conn is the DSN's user and database at the resolved address, with the certificates the
// user gave for TLS; no socket (the server's host is not the lab's).
func (x *External) Conn() Conn {
	return Conn{Engine: MariaDB, Host: x.cfg.IP, Port: x.cfg.DSN.Port, User: x.cfg.DSN.User,
		Password: x.cfg.Password, DB: x.cfg.DSN.DB, CertDir: x.cfg.CertDir}
}

// DSN is the server's DSN as given (without password).
func (x *External) DSN() DSN { return x.cfg.DSN }

// Pid is 0: wirelab did not start the server.
func (x *External) Pid() int { return 0 }

// Pids is none: the server's processes are not wirelab's to see, so no server CPU.
func (x *External) Pids() []int { return nil }

// Version is the server's SELECT VERSION().
func (x *External) Version() string { return x.version }

// Facts are the version and the settings that shape the wire, marked external. A setting
// this server does not have (MySQL 8.4 dropped have_ssl) is shown as such, not left out.
func (x *External) Facts(ctx context.Context) (Facts, error) {
	f := Facts{Engine: string(MariaDB), Version: x.version, External: true}
	if !strings.Contains(x.version, "MariaDB") {
		f.Engine = "mysql"
	}
	for _, name := range MariaDBSettings {
		var v sql.NullString
		err := x.row(ctx, "SELECT @@"+name, &v)
		var me *mysql.MySQLError
		switch {
		case errors.As(err, &me) && me.Number == 1193: // ER_UNKNOWN_SYSTEM_VARIABLE
			v = sql.NullString{String: "(not a variable of this server)", Valid: true}
		case err != nil:
			return f, fmt.Errorf("server %s: read @@%s: %w", x.where(), name, err)
		}
		f.Settings = append(f.Settings, result.Setting{Name: name, Value: v.String})
	}
	return f, nil
}

// ExistingTables returns which of names are tables in the DSN's database.
func (x *External) ExistingTables(ctx context.Context, names []string) ([]string, error) {
	if x.db == nil {
		return nil, fmt.Errorf("server %s: not logged in", x.where())
	}
	ctx, cancel := context.WithTimeout(ctx, x.cfg.Timeout)
	defer cancel()
	rows, err := x.db.QueryContext(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()")
	if err != nil {
		return nil, fmt.Errorf("server %s: list the tables of %s: %w", x.where(), x.cfg.DSN.DB, err)
	}
	defer rows.Close()
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("server %s: list the tables of %s: %w", x.where(), x.cfg.DSN.DB, err)
		}
		if want[n] {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, rows.Err()
}

// DropTables drops names (IF EXISTS) from the DSN's database: the tables wirelab created.
func (x *External) DropTables(ctx context.Context, names []string) error {
	if len(names) == 0 {
		return nil
	}
	if x.db == nil {
		return fmt.Errorf("server %s: not logged in", x.where())
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + strings.ReplaceAll(n, "`", "``") + "`"
	}
	ctx, cancel := context.WithTimeout(ctx, 10*x.cfg.Timeout)
	defer cancel()
	if _, err := x.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+strings.Join(q, ", ")); err != nil {
		return fmt.Errorf("server %s: drop wirelab's tables %s: %w", x.where(), strings.Join(names, ", "), err)
	}
	return nil
}

// DialFunc opens a TCP connection some other way (from inside a lab host).
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

var dialSeq atomic.Int64

// PingVia logs in over a connection dial opens: from the lab's client host, through the
// wire, it proves the route there and back and that the server lets the lab's address in.
func (x *External) PingVia(ctx context.Context, dial DialFunc) error {
	name := "wirelab-via-" + strconv.FormatInt(dialSeq.Add(1), 10)
	mysql.RegisterDialContext(name, func(ctx context.Context, addr string) (net.Conn, error) {
		return dial(ctx, "tcp", addr)
	})
	defer mysql.DeregisterDialContext(name)
	conn, err := mysql.NewConnector(x.mysqlConfig(name))
	if err != nil {
		return fmt.Errorf("server %s: %w", x.where(), err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	return x.ping(ctx, db)
}

// Stop leaves the server running and closes wirelab's connection: it is not wirelab's.
func (x *External) Stop(context.Context) error {
	if x.db != nil {
		return x.db.Close()
	}
	return nil
}
