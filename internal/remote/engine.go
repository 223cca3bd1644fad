package remote

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/hosts"
)

// Engine is one database engine that `wirelab agent <engine>` starts on a server host
// (mariadb.go, postgres.go). What the backend needs of it that is only data is its Spec;
// the one thing done differently is reading the settings the report names.
type Engine interface {
	Spec() EngineSpec
	// Facts reads the server's version and wire settings on its host, from the agent's
	// state st (the agent may have read them) or by asking the server.
	Facts(ctx context.Context, h hosts.Host, st ServerState) (engine.Facts, error)
	// Planned is what the agent would report of a server in dir before it runs: its
	// socket, certificate directory, bench user and database (a dry run's server, Plan).
	Planned(dir string) ServerState
	// StartHere is the agent's half (Serve): it starts the server o describes on the
	// host it runs on and returns what the state file reports of it and how to stop it.
	// The stop is called once, also after ctx ended, and bounds itself (a clean
	// shutdown, then SIGKILL).
	StartHere(ctx context.Context, o ServerOptions, log *slog.Logger) (ServerState, func(context.Context) error, error)
}

// EngineSpec is what the backend knows of an engine before and after it starts.
type EngineSpec struct {
	Kind engine.Kind
	// Port is the TCP port the agent's server listens on.
	Port int
	// Comms are the server's names in /proc/PID/comm: a pid from the state file is
	// stopped or killed only while it still names one.
	Comms []string
	// ServerNeeds are what the server host must have before anything is copied there
	// (the load driver's prepare runs there too).
	ServerNeeds []Need
	// ClientFiles are the files of the server's CertDir the client's load driver reads
	// (copied to the client, which gets its own CertDir).
	ClientFiles []string
	// Driver is sysbench's --db-driver for the engine: the client's and the server's
	// sysbench must be built with it.
	Driver string
	// WatchTree says the server's CPU is its main process and its children (one backend
	// per connection), not the main process alone.
	WatchTree bool
}

// ReplicaNeeds are what a host that runs a replica of the server must have: the server's
// programs without the load driver, which runs on the source's host.
func (s EngineSpec) ReplicaNeeds() []Need {
	var out []Need
	for _, n := range s.ServerNeeds {
		if n.What != "sysbench" {
			out = append(out, n)
		}
	}
	return out
}

// Need is one pre-check: a shell test run on the host, and what to install when it fails.
type Need struct {
	What    string // what is missing, e.g. "mariadbd", "PostgreSQL's initdb, postgres and psql"
	Check   string // sh -c script: exit 0 when the host has it
	Package string // the Debian package that brings it
}

// engines are the engines a server host can run, by --engine's name.
var engines = map[engine.Kind]Engine{
	engine.MariaDB:  mariadbEngine{},
	engine.Postgres: postgresEngine{},
}

// engineOf is k's Engine; "" is MariaDB, the default.
func engineOf(k engine.Kind) (Engine, error) {
	if k == "" {
		k = engine.MariaDB
	}
	e, ok := engines[k]
	if !ok {
		return nil, fmt.Errorf("--hosts: --engine %s: on real hosts wirelab starts mariadb or postgres", k)
	}
	return e, nil
}

// program is the Need of one program in PATH or /usr/sbin (where Debian puts mariadbd,
// outside a user's PATH).
func program(name, pkg string) Need {
	q := hosts.ShellQuote(name)
	return Need{What: name, Check: "command -v " + q + " || [ -x /usr/sbin/" + q + " ]", Package: pkg}
}

// sysbenchDriver is the Need of sysbench built with a database driver: `sysbench --help`
// lists the compiled-in ones, one an indented line ("  pgsql - PostgreSQL driver").
func sysbenchDriver(driver string) Need {
	return Need{What: "sysbench with its " + driver + " driver",
		Check: "sysbench --help 2>/dev/null | grep -q '^ *" + driver + " '", Package: "sysbench"}
}

// check runs each need's test on h and names the first that fails and its package.
func check(ctx context.Context, h hosts.Host, why string, needs []Need) error {
	for _, n := range needs {
		if _, err := h.Run(ctx, "sh", "-c", n.Check); err != nil {
			return fmt.Errorf("host %s: %s is not installed (%s): install it (Debian: apt-get install %s)", h.Name(), n.What, why, n.Package)
		}
	}
	return nil
}

// Port is the port the server an agent starts for engine k listens on unless told
// otherwise; 0 for an engine no agent starts.
func Port(k engine.Kind) int {
	e, err := engineOf(k)
	if err != nil {
		return 0
	}
	return e.Spec().Port
}
