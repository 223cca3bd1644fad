package remote

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wirelab/wirelab/internal/dbserver"
	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/hosts"
	"github.com/wirelab/wirelab/internal/mariadb"
)

// Defaults applied by StartMariaDB when a MariaDBOptions field is zero.
const (
	DefaultPort         = 3306
	DefaultFor          = 4 * time.Hour
	DefaultStartTimeout = 3 * time.Minute // a first start initialises the datadir
	// DefaultStopTimeout covers the agent's own wait for a clean InnoDB shutdown (60 s)
	// before it kills mariadbd.
	DefaultStopTimeout = 90 * time.Second
)

// pollEvery is how often StartMariaDB looks for the state file and Stop for mariadbd.
const pollEvery = 250 * time.Millisecond

// logTailLines is how much of the agent's log a failed start shows.
const logTailLines = 20

// ErrAgentGone means the agent exited without reporting a server; the error carries the
// tail of its log.
var ErrAgentGone = errors.New("the agent exited without writing " + StateFile)

// ErrStartTimeout means the agent did not report a server within StartTimeout.
var ErrStartTimeout = errors.New("no " + StateFile + " in time")

// MariaDBOptions says where and how to run the server.
type MariaDBOptions struct {
	// Agent is the wirelab binary on the host (copied there with Host.Copy).
	Agent string
	// Dir is the server's directory on the host, created if missing: datadir, socket,
	// certificates, logs, the state file and the agent's log. Every directory above it
	// must be traversable by the mysql user, and Dir short enough for the socket path
	// (107 bytes).
	Dir string
	// Bind is mariadbd's bind-address: the host's data address clients on other hosts
	// dial (a comma-separated list also listens on the others, e.g. "ADDR,127.0.0.1").
	Bind       string
	Port       int    // default 3306
	BufferPool string // innodb_buffer_pool_size; "" = the agent's default (1G)
	// For is how long the agent keeps the server when nobody stops it (wirelab killed):
	// then it stops the server and exits. Default 4 h.
	For          time.Duration
	StartTimeout time.Duration // how long to wait for the state file; default 3 min
	StopTimeout  time.Duration // how long Stop waits for mariadbd to go; default 90 s
}

func (o MariaDBOptions) withDefaults() MariaDBOptions {
	if o.Port == 0 {
		o.Port = DefaultPort
	}
	if o.For <= 0 {
		o.For = DefaultFor
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = DefaultStopTimeout
	}
	return o
}

// agentArgv is the agent's command line.
func (o MariaDBOptions) agentArgv() []string {
	argv := []string{o.Agent, "agent", "mariadb", "--dir", o.Dir, "--bind", o.Bind,
		"--port", strconv.Itoa(o.Port), "--for", o.For.String()}
	if o.BufferPool != "" {
		argv = append(argv, "--buffer-pool", o.BufferPool)
	}
	return argv
}

// MariaDB is a MariaDB server an agent runs on a host. It is an engine.Server.
type MariaDB struct {
	h     hosts.Host
	agent hosts.Proc
	st    ServerState
	o     MariaDBOptions

	mu      sync.Mutex
	stopped bool
}

var _ engine.Server = (*MariaDB)(nil)

// StartMariaDB starts `wirelab agent mariadb` on h (detached, in a process group of its
// own, output in Dir/AgentLog) and waits for its state file. A failed start (an error in
// the state file, the agent gone, no state file within StartTimeout, ctx ended) stops the
// agent and returns an error naming the host, with the tail of the agent's log.
func StartMariaDB(ctx context.Context, h hosts.Host, o MariaDBOptions) (*MariaDB, error) {
	o = o.withDefaults()
	if o.Agent == "" || !path.IsAbs(o.Dir) || o.Bind == "" {
		return nil, fmt.Errorf("host %s: start mariadb: Agent, an absolute Dir and Bind are required (got %q, %q, %q)",
			h.Name(), o.Agent, o.Dir, o.Bind)
	}
	statePath, logPath := path.Join(o.Dir, StateFile), path.Join(o.Dir, AgentLog)
	// The directory must be there for the log; an old state file would be taken for news.
	if _, err := h.Run(ctx, "mkdir", "-p", "--", o.Dir); err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	if _, err := h.Run(ctx, "rm", "-f", "--", statePath); err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	agent, err := h.Start(ctx, "mariadb-agent", o.agentArgv(), logPath)
	if err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	m := &MariaDB{h: h, agent: agent, o: o}
	st, err := m.waitState(ctx, statePath)
	if err != nil {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		defer cancel()
		_ = agent.Stop(stopCtx) // the agent stops what it started on SIGTERM
		return nil, fmt.Errorf("host %s: start mariadb in %s: %w%s", h.Name(), o.Dir, err, m.logTail(stopCtx, logPath))
	}
	m.st = st
	return m, nil
}

// PlanMariaDB is StartMariaDB on a host that prints what it would run instead of running
// it (a dry run): it starts the agent there and returns the server as the agent would
// report it, with the paths the agent gives it; its pid (0) and password are not known
// before it runs.
func PlanMariaDB(ctx context.Context, h hosts.Host, o MariaDBOptions) (*MariaDB, error) {
	o = o.withDefaults()
	logPath := path.Join(o.Dir, AgentLog)
	if _, err := h.Run(ctx, "mkdir", "-p", "--", o.Dir); err != nil {
		return nil, fmt.Errorf("plan mariadb: %w", err)
	}
	agent, err := h.Start(ctx, "mariadb-agent", o.agentArgv(), logPath)
	if err != nil {
		return nil, fmt.Errorf("plan mariadb: %w", err)
	}
	socket, certs := mariadb.PathsIn(o.Dir)
	bind, _, _ := strings.Cut(o.Bind, ",")
	return &MariaDB{h: h, agent: agent, o: o, st: ServerState{Socket: socket, Host: strings.TrimSpace(bind),
		Port: o.Port, User: mariadb.BenchUser, Password: "PASSWORD-FROM-" + StateFile, DB: mariadb.BenchDB,
		CertDir: certs}}, nil
}

// waitState polls the state file until it is there, the agent is gone, StartTimeout
// passes or ctx ends.
func (m *MariaDB) waitState(ctx context.Context, statePath string) (ServerState, error) {
	deadline := time.NewTimer(m.o.StartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if b, err := m.h.ReadFile(ctx, statePath); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			return ParseState(b)
		}
		if !m.alive(ctx, m.agent.Pid()) {
			// It may have written the file just before it exited.
			if b, err := m.h.ReadFile(ctx, statePath); err == nil && len(strings.TrimSpace(string(b))) > 0 {
				return ParseState(b)
			}
			return ServerState{}, fmt.Errorf("%w (pid %d)", ErrAgentGone, m.agent.Pid())
		}
		select {
		case <-ctx.Done():
			return ServerState{}, ctx.Err()
		case <-deadline.C:
			return ServerState{}, fmt.Errorf("%w: the agent (pid %d) wrote none within %s", ErrStartTimeout, m.agent.Pid(), m.o.StartTimeout)
		case <-tick.C:
		}
	}
}

// alive reports whether pid runs on the host, not as a zombie, with one of comm's names
// when any are given. A pid of 0 (a dry run's) counts as alive.
func (m *MariaDB) alive(ctx context.Context, pid int, comm ...string) bool {
	if pid == 0 {
		return true
	}
	b, err := m.h.ReadFile(ctx, "/proc/"+strconv.Itoa(pid)+"/stat")
	if err != nil {
		return false
	}
	if len(comm) > 0 {
		return dbserver.StatIs(string(b), comm...)
	}
	return !strings.Contains(string(b), ") Z ")
}

// logTail is the end of the agent's log as an error's last lines, or "" when it cannot be
// read (a lab host keeps its own logs).
func (m *MariaDB) logTail(ctx context.Context, logPath string) string {
	b, err := m.h.ReadFile(ctx, logPath)
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	return "\n" + logPath + " on " + m.h.Name() + ", last lines:\n  " + strings.Join(lines, "\n  ")
}

// Kind is MariaDB.
func (m *MariaDB) Kind() engine.Kind { return engine.MariaDB }

// Conn is the bench user at the bind address; Socket and CertDir are paths on the server
// host.
func (m *MariaDB) Conn() engine.Conn {
	return engine.Conn{Engine: engine.MariaDB, Host: m.st.Host, Port: m.st.Port, Socket: m.st.Socket,
		User: m.st.User, Password: m.st.Password, DB: m.st.DB, CertDir: m.st.CertDir}
}

// Pid is mariadbd's, on the server host.
func (m *MariaDB) Pid() int { return m.st.Pid }

// Pids is mariadbd alone: one process serves every connection.
func (m *MariaDB) Pids() []int { return []int{m.st.Pid} }

// Version is the server's SELECT VERSION().
func (m *MariaDB) Version() string { return m.st.Version }

// State is what the agent reported.
func (m *MariaDB) State() ServerState { return m.st }

// Stop stops the agent (SIGTERM: it shuts mariadbd down cleanly) and waits up to
// StopTimeout for mariadbd to be gone, then kills it. It runs also when ctx has ended (a
// second Ctrl-C), and then kills mariadbd at once instead of waiting. Idempotent. A
// mariadbd whose /proc entry cannot be read (the connection lost) counts as gone.
func (m *MariaDB) Stop(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return nil
	}
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.o.StopTimeout+30*time.Second)
	defer cancel()
	if m.st.Pid == 0 { // a planned server (PlanMariaDB): its agent is all there is
		m.stopped = true
		return m.agent.Stop(bg)
	}
	// The agent's Stop gives it a few seconds before SIGKILL; mariadbd got its SIGTERM
	// by then and finishes its shutdown without it.
	stopErr := m.agent.Stop(bg)
	deadline := time.Now().Add(m.o.StopTimeout)
	for m.alive(bg, m.st.Pid, "mariadbd", "mysqld") {
		if time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(pollEvery)
			continue
		}
		_, kerr := m.h.Run(bg, "kill", "-KILL", strconv.Itoa(m.st.Pid))
		if ctx.Err() != nil {
			return fmt.Errorf("host %s: stop mariadb (pid %d): %w: killed it (%v)", m.h.Name(), m.st.Pid, ctx.Err(), kerr)
		}
		return fmt.Errorf("host %s: stop mariadb (pid %d): still running %s after SIGTERM: killed it (%v; agent: %v)",
			m.h.Name(), m.st.Pid, m.o.StopTimeout, kerr, stopErr)
	}
	if stopErr != nil {
		return fmt.Errorf("host %s: stop mariadb: %w", m.h.Name(), stopErr)
	}
	m.stopped = true
	return nil
}
