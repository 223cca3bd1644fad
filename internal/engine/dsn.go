package engine

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// DSNForm is how an existing server's DSN is written (go-sql-driver/mysql's form, without
// the password), for messages.
const DSNForm = "user@tcp(host:port)/db"

// DSN is an existing MySQL/MariaDB server as go-sql-driver/mysql's DSN names it. It never
// holds a password: that comes from an environment variable or a file, so it does not end
// up in shell history, ps or results.json.
type DSN struct {
	User string
	Host string // as written: a name or an IP address
	Port int
	DB   string
}

// Addr is host:port.
func (d DSN) Addr() string { return net.JoinHostPort(d.Host, strconv.Itoa(d.Port)) }

// String is the DSN as go-sql-driver/mysql writes it, without a password.
func (d DSN) String() string { return d.User + "@tcp(" + d.Addr() + ")/" + d.DB }

// ErrDSNPassword is returned for a DSN that carries a password; callers add where the
// password goes instead.
var ErrDSNPassword = errors.New("the DSN carries a password")

// ParseDSN reads and checks an existing server's DSN: TCP (the lab reaches the server
// across its wire, never through a unix socket), a user, a database (wirelab creates its
// sysbench tables there), no password and no ?parameters (sysbench would not honour them,
// and --tls/--compression say how it connects).
func ParseDSN(s string) (DSN, error) {
	cfg, err := mysql.ParseDSN(s)
	if err != nil {
		return DSN{}, fmt.Errorf("dsn %q: %w; want %s", s, err, DSNForm)
	}
	switch {
	case cfg.Passwd != "":
		// The DSN is not quoted back: it holds the password.
		return DSN{}, fmt.Errorf("dsn for %s@%s: %w", cfg.User, cfg.Addr, ErrDSNPassword)
	case cfg.User == "":
		return DSN{}, fmt.Errorf("dsn %q has no user; want %s", s, DSNForm)
	case cfg.Net != "tcp":
		return DSN{}, fmt.Errorf("dsn %q: network %q; want tcp, as in %s (the lab reaches the server over TCP)", s, cfg.Net, DSNForm)
	case !strings.Contains(s, "@tcp("):
		return DSN{}, fmt.Errorf("dsn %q names no address; want %s", s, DSNForm)
	case cfg.DBName == "":
		return DSN{}, fmt.Errorf("dsn %q names no database; want %s, a database wirelab may create its sysbench tables in", s, DSNForm)
	case strings.Contains(s, "?"):
		return DSN{}, fmt.Errorf("dsn %q has parameters; drop the ?... part: --tls and --compression say how sysbench connects", s)
	}
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return DSN{}, fmt.Errorf("dsn %q: address %q: %w; want %s", s, cfg.Addr, err, DSNForm)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return DSN{}, fmt.Errorf("dsn %q: port %q: want 1-65535", s, port)
	}
	return DSN{User: cfg.User, Host: host, Port: n, DB: cfg.DBName}, nil
}

// ReadPasswordFile reads a password file: its content without the trailing newline. An
// empty file is an empty password (a user without one).
func ReadPasswordFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read password file: %w", err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}
