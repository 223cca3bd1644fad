package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/remote"
)

// agentEngine is one database engine `wirelab agent <engine>` runs on a server host for a
// study driven from another machine (agent_mariadb.go, agent_postgres.go): start starts
// the server as c says and returns what the state file reports of it and how to stop it.
// The stop is called once, also after ctx ended, and bounds itself (a clean shutdown,
// then SIGKILL).
type agentEngine interface {
	start(ctx context.Context, c agentServerConfig) (remote.ServerState, func(context.Context) error, error)
}

// agentServerConfig is the agent's flags, checked.
type agentServerConfig struct {
	dir, bind  string
	port       int
	bufferPool string // --buffer-pool's form: 512M, 1G
	// repl are MariaDB's replication settings (--server-id, --log-bin, --set): a source
	// and its replica on two hosts, as the lab's replication study starts them.
	repl agentRepl
	log  *slog.Logger
}

// agentRepl are the agent's replication flags; MariaDB's agent takes them, PostgreSQL's
// refuses them (its replica is built from a base backup, which real hosts do not run).
type agentRepl struct {
	serverID int
	logBin   bool
	set      map[string]string // more [mysqld] settings, name=value
}

// given says whether any replication flag was given.
func (r agentRepl) given() bool { return r.serverID != 0 || r.logBin || len(r.set) > 0 }

// agentEngines are the agents by subcommand, which is the engine's --engine name.
var agentEngines = map[engine.Kind]agentEngine{
	engine.MariaDB:  agentMariaDB{},
	engine.Postgres: agentPostgres{},
}

// cmdAgentServer runs a database server of kind on the host it runs on (remote.Start
// starts it): it starts the server in --dir, reports it in --dir/server.json (or the
// error that stopped it there), and stops it on SIGTERM or SIGINT, or once --for has
// passed (wirelab was killed and never stopped it).
func cmdAgentServer(p *Process, kind engine.Kind, args []string) error {
	name := "agent " + string(kind)
	fs := newFlagSet(p, name, "internal: run a "+kind.Title()+" server on this host for a study driven from another one",
		"wirelab "+name+" --dir /tmp/wirelab-x/"+string(kind)+" --bind 198.18.0.2 --for 4h")
	dir := fs.String("dir", "", "the server's directory (datadir, socket, certificates, logs, server.json); created if missing")
	bind := fs.String("bind", "", "the address clients dial: the server's listen address (a comma-separated list for more)")
	port := fs.Int("port", remote.Port(kind), "TCP port")
	bufferPool := fs.String("buffer-pool", "1G", "the data cache (innodb_buffer_pool_size, shared_buffers): "+lab.BufferPoolForm)
	lifetime := fs.Duration("for", remote.DefaultFor, "stop the server and exit after this long, if nothing stopped it before")
	repl := agentRepl{set: map[string]string{}}
	fs.IntVar(&repl.serverID, "server-id", 0, "MariaDB: server_id (a replication source and its replica differ)")
	fs.BoolVar(&repl.logBin, "log-bin", false, "MariaDB: write a binary log (GTIDs, ROW), as a replication source and replica do")
	fs.Func("set", "MariaDB: one more [mysqld] setting, name=value (repeatable)", func(v string) error {
		k, val, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("want name=value, got %q", v)
		}
		repl.set[strings.TrimSpace(k)] = val
		return nil
	})
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !filepath.IsAbs(*dir) || *bind == "" || *lifetime <= 0 {
		return usagef("%s: --dir (an absolute path), --bind and a positive --for are required", name)
	}
	if *port < 1 || *port > 65535 {
		return usagef("%s: --port %d: want 1..65535", name, *port)
	}
	if err := lab.CheckBufferPool(*bufferPool); err != nil {
		return usagef("%s: %v", name, err)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-p.Interrupts: // SIGTERM from remote.Server.Stop: stop the server, exit
			cancel()
		case <-ctx.Done():
		}
	}()
	log := p.Logger.With("component", "agent-"+string(kind))
	st, stop, err := agentEngines[kind].start(ctx, agentServerConfig{dir: *dir, bind: *bind, port: *port,
		bufferPool: *bufferPool, repl: repl, log: log})
	if err != nil {
		err = fmt.Errorf("%s: %w", name, err)
		if werr := remote.WriteState(*dir, remote.ServerState{Error: err.Error()}); werr != nil {
			return errors.Join(err, werr)
		}
		return err
	}
	st.AgentPid = os.Getpid()
	err = remote.WriteState(*dir, st)
	if err == nil {
		log.Info(string(kind)+" serving", "pid", st.Pid, "addr", fmt.Sprintf("%s:%d", st.Host, st.Port), "for", *lifetime)
		t := time.NewTimer(*lifetime)
		select {
		case <-ctx.Done():
			log.Info("stopping " + string(kind) + ": signalled")
		case <-t.C:
			log.Info("stopping "+string(kind)+": --for has passed", "for", *lifetime)
		}
		t.Stop()
	}
	// Not ctx: it is cancelled by now.
	if serr := stop(context.Background()); serr != nil {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
