package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/postgres"
	"github.com/wirelab/wirelab/internal/result"
)

// Kind names a database engine, as --engine spells it.
type Kind string

// The engines wirelab can start in a lab.
const (
	MariaDB  Kind = "mariadb"
	Postgres Kind = "postgres"
)

// Kinds lists the accepted --engine values, default first.
var Kinds = []Kind{MariaDB, Postgres}

// Parse reads an --engine value; "" is MariaDB, the default.
func Parse(s string) (Kind, error) {
	if s == "" {
		return MariaDB, nil
	}
	for _, k := range Kinds {
		if strings.EqualFold(s, string(k)) {
			return k, nil
		}
	}
	return "", fmt.Errorf("--engine %q: want one of %s", s, kindList())
}

func kindList() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// Port is the engine's usual TCP port.
func (k Kind) Port() int {
	if k == Postgres {
		return 5432
	}
	return 3306
}

// Title is the engine's name as people write it.
func (k Kind) Title() string {
	if k == Postgres {
		return "PostgreSQL"
	}
	return "MariaDB"
}

// HasCompression says whether the engine's protocol can compress (MySQL/MariaDB's zlib
// protocol compression); PostgreSQL's cannot, so a compressed channel there is a tunnel.
func (k Kind) HasCompression() bool { return k != Postgres }

// RefuseCompression is the error for protocol compression asked of an engine without it;
// flag names the option the user gave.
func (k Kind) RefuseCompression(flag string) error {
	if k.HasCompression() {
		return nil
	}
	return fmt.Errorf("%s: %s has no protocol compression; compress its traffic with --channel tunnel instead", flag, k.Title())
}

// Conn is how clients reach a server.
type Conn struct {
	Engine Kind
	Host   string // TCP address clients dial (the server host's lab address)
	Port   int
	// Socket is the unix socket: a file for MariaDB, the socket's directory for
	// PostgreSQL (libpq takes a directory as its host). "" for an external server.
	Socket   string
	User     string
	Password string
	DB       string
	CertDir  string // the CA and client certificates; "" when TLS is not set up
}

// SocketFile is the unix socket's file: Socket itself for MariaDB, the .s.PGSQL.<port>
// file in the Socket directory for PostgreSQL. "" without a socket.
func (c Conn) SocketFile() string {
	if c.Socket == "" || c.Engine != Postgres {
		return c.Socket
	}
	return filepath.Join(c.Socket, ".s.PGSQL."+strconv.Itoa(c.Port))
}

// Facts are what the report says about a server: its engine, version and the settings
// that shape its wire (results.json's environment.server).
type Facts = result.ServerFacts

// Server is one running database server.
type Server interface {
	Kind() Kind
	Conn() Conn
	// Pid is the server's main process (mariadbd, the postmaster), 0 when wirelab did
	// not start it.
	Pid() int
	// Pids are the processes whose CPU is the server's, read at every sample: one
	// mariadbd, or the postmaster with a backend process per connection.
	Pids() []int
	// Version is the server's own version string.
	Version() string
	// Facts reads the version and the settings that matter for the wire.
	Facts(ctx context.Context) (Facts, error)
	// Stop stops a server wirelab started; idempotent.
	Stop(ctx context.Context) error
}

// Env is the environment that lets the engine's own clients (psql, pgbench, the mariadb
// client) reach the bench database over TCP without flags, for `wirelab exec`:
// WIRELAB_ENGINE always (MariaDB's clients read the WIRELAB_DB_* variables `wirelab exec`
// sets for every engine), and for PostgreSQL libpq's PGHOST ... PGSSLMODE (TLS required
// when tls, else disabled: libpq's default "prefer" would silently use it).
func (c Conn) Env(tls bool) []string {
	env := []string{"WIRELAB_ENGINE=" + string(c.Engine)}
	if c.Engine == Postgres {
		mode := postgres.SSLDisable
		if tls {
			mode = postgres.SSLRequire
		}
		env = append(env, postgres.LibpqEnv(c.Host, c.Port, c.User, c.Password, c.DB, c.CertDir, mode)...)
	}
	return env
}
