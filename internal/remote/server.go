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

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/hosts"
)

// Defaults applied by Start when a ServerOptions field is zero (the port is the engine's:
// EngineSpec.Port).
const (
	DefaultFor          = 4 * time.Hour
	DefaultStartTimeout = 3 * time.Minute // a first start initialises the datadir
	// DefaultStopTimeout covers the agent's own wait for a clean shutdown (InnoDB's 60 s,
	// PostgreSQL's fast shutdown 30 s) before it kills the server.
	DefaultStopTimeout = 90 * time.Second
)

// pollEvery is how often Start looks for the state file and Stop for the server.
const pollEvery = 250 * time.Millisecond

// logTailLines is how much of the agent's log a failed start shows.
const logTailLines = 20

// ErrAgentGone means the agent exited without reporting a server; the error carries the
// tail of its log.
var ErrAgentGone = errors.New("the agent exited without writing " + StateFile)

// ErrStartTimeout means the agent did not report a server within StartTimeout.
var ErrStartTimeout = errors.New("no " + StateFile + " in time")

// ServerOptions says which server to run, where and how.
type ServerOptions struct {
	// Engine is the server's engine; "" is MariaDB.
	Engine engine.Kind
	// Agent is the wirelab binary on the host (copied there with Host.Copy).
	Agent string
	// Dir is the server's directory on the host, created if missing: datadir, socket,
	// certificates, logs, the state file and the agent's log. Every directory above it
	// must be traversable by the server's OS user (mysql, postgres), and Dir short enough
	// for the socket path (107 bytes).
	Dir string
	// Bind is the address the server listens on: the host's data address clients on
	// other hosts dial (a comma-separated list also listens on the others, e.g.
	// "ADDR,127.0.0.1").
	Bind string
	Port int // default: the engine's (EngineSpec.Port)
	// BufferPool is the data cache in --buffer-pool's form (innodb_buffer_pool_size,
	// shared_buffers); "" = the agent's default (1G).
	BufferPool string
	// ServerID, LogBin and Extra are MariaDB's replication settings (lab.DBOptions'): a
	// source and its replica on two hosts. Zero values leave the agent's defaults.
	ServerID int
	LogBin   bool
	Extra    map[string]string
	// For is how long the agent keeps the server when nobody stops it (wirelab killed):
	// then it stops the server and exits. Default 4 h.
	For          time.Duration
	StartTimeout time.Duration // how long to wait for the state file; default 3 min
	StopTimeout  time.Duration // how long Stop waits for the server to go; default 90 s
}

// withDefaults fills the zero fields, the port from e.
func (o ServerOptions) withDefaults(e Engine) ServerOptions {
	o.Engine = e.Spec().Kind
	if o.Port == 0 {
		o.Port = e.Spec().Port
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

// Server is a database server an agent runs on a host. It is an engine.Server.
type Server struct {
	h     hosts.Host
	e     Engine
	agent hosts.Proc
	st    ServerState
	o     ServerOptions

	mu      sync.Mutex
	stopped bool
}

var _ engine.Server = (*Server)(nil)

// Start starts `wirelab agent <engine>` on h (detached, in a process group of its own,
// output in Dir/AgentLog(engine)) and waits for its state file. A failed start (an error
// in the state file, the agent gone, no state file within StartTimeout, ctx ended) stops
// the agent and returns an error naming the host, with the tail of the agent's log.
func Start(ctx context.Context, h hosts.Host, o ServerOptions) (*Server, error) {
	e, err := engineOf(o.Engine)
	if err != nil {
		return nil, err
	}
	o = o.withDefaults(e)
	if o.Agent == "" || !path.IsAbs(o.Dir) || o.Bind == "" {
		return nil, fmt.Errorf("host %s: start %s: Agent, an absolute Dir and Bind are required (got %q, %q, %q)",
			h.Name(), o.Engine, o.Agent, o.Dir, o.Bind)
	}
	statePath, logPath := path.Join(o.Dir, StateFile), path.Join(o.Dir, AgentLog(o.Engine))
	// The directory must be there for the log; an old state file would be taken for news.
	if _, err := h.Run(ctx, "mkdir", "-p", "--", o.Dir); err != nil {
		return nil, fmt.Errorf("start %s: %w", o.Engine, err)
	}
	if _, err := h.Run(ctx, "rm", "-f", "--", statePath); err != nil {
		return nil, fmt.Errorf("start %s: %w", o.Engine, err)
	}
	agent, err := h.Start(ctx, string(o.Engine)+"-agent", o.AgentArgv(), logPath)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", o.Engine, err)
	}
	m := &Server{h: h, e: e, agent: agent, o: o}
	st, err := m.waitState(ctx, statePath)
	if err != nil {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		defer cancel()
		_ = agent.Stop(stopCtx) // the agent stops what it started on SIGTERM
		return nil, fmt.Errorf("host %s: start %s in %s: %w%s", h.Name(), o.Engine, o.Dir, err, m.logTail(stopCtx, logPath))
	}
	m.st = st
	return m, nil
}

// Plan is Start on a host that prints what it would run instead of running it (a dry
// run): it starts the agent there and returns the server as the agent would report it,
// with the paths the engine gives it in Dir (Engine.Planned) and Bind's first address;
// its pid (0) and password are not known before it runs.
func Plan(ctx context.Context, h hosts.Host, o ServerOptions) (*Server, error) {
	e, err := engineOf(o.Engine)
	if err != nil {
		return nil, err
	}
	o = o.withDefaults(e)
	if _, err := h.Run(ctx, "mkdir", "-p", "--", o.Dir); err != nil {
		return nil, fmt.Errorf("plan %s: %w", o.Engine, err)
	}
	agent, err := h.Start(ctx, string(o.Engine)+"-agent", o.AgentArgv(), path.Join(o.Dir, AgentLog(o.Engine)))
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", o.Engine, err)
	}
	st := e.Planned(o.Dir)
	bind, _, _ := strings.Cut(o.Bind, ",")
	st.Host, st.Port, st.Password = strings.TrimSpace(bind), o.Port, "PASSWORD-FROM-"+StateFile
	return &Server{h: h, e: e, agent: agent, o: o, st: st}, nil
}

// waitState polls the state file until it is there, the agent is gone, StartTimeout
// passes or ctx ends.
func (m *Server) waitState(ctx context.Context, statePath string) (ServerState, error) {
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
func (m *Server) alive(ctx context.Context, pid int, comm ...string) bool {
	if pid == 0 {
		return true
	}
	st, err := hosts.ProcFS(ctx, m.h).Stat(pid)
	if err != nil {
		return false
	}
	if len(comm) > 0 {
		return st.Is(comm...)
	}
	return !st.Zombie()
}

// logTail is the end of the agent's log as an error's last lines, or "" when it cannot be
// read (a lab host keeps its own logs).
func (m *Server) logTail(ctx context.Context, logPath string) string {
	return logTail(ctx, m.h, logPath)
}

// logTail is the end of a log on h as an error's last lines, or "" when it cannot be read.
func logTail(ctx context.Context, h hosts.Host, logPath string) string {
	b, err := h.ReadFile(ctx, logPath)
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	return "\n" + logPath + " on " + h.Name() + ", last lines:\n  " + strings.Join(lines, "\n  ")
}

// Kind is the server's engine.
func (m *Server) Kind() engine.Kind { return m.o.Engine }

// Conn is the bench user at the bind address; Socket (MariaDB's socket file,
// PostgreSQL's socket directory) and CertDir are paths on the server host.
func (m *Server) Conn() engine.Conn {
	return engine.Conn{Engine: m.o.Engine, Host: m.st.Host, Port: m.st.Port, Socket: m.st.Socket,
		User: m.st.User, Password: m.st.Password, DB: m.st.DB, CertDir: m.st.CertDir}
}

// Pid is the server's main process (mariadbd, the postmaster), on the server host.
func (m *Server) Pid() int { return m.st.Pid }

// Pids is the main process: pids on the server host mean nothing on this machine, and the
// server's own sample agent watches the server there (with its children where
// EngineSpec.WatchTree says so).
func (m *Server) Pids() []int { return []int{m.st.Pid} }

// Facts reads the version and the wire's settings on the server host.
func (m *Server) Facts(ctx context.Context) (engine.Facts, error) { return m.e.Facts(ctx, m.h, m.st) }

// Version is the server's SELECT VERSION().
func (m *Server) Version() string { return m.st.Version }

// State is what the agent reported.
func (m *Server) State() ServerState { return m.st }

// Stop stops the agent (SIGTERM: it shuts the server down cleanly) and waits up to
// StopTimeout for the server to be gone, then kills it with its children. It runs also
// when ctx has ended (a second Ctrl-C), and then kills the server at once instead of
// waiting. Idempotent. A server whose /proc entry cannot be read (the connection lost)
// counts as gone.
func (m *Server) Stop(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return nil
	}
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.o.StopTimeout+30*time.Second)
	defer cancel()
	if m.st.Pid == 0 { // a planned server (Plan): its agent is all there is
		m.stopped = true
		return m.agent.Stop(bg)
	}
	// The agent's Stop gives it a few seconds before SIGKILL; the server got its
	// shutdown signal by then and finishes without it.
	stopErr := m.agent.Stop(bg)
	deadline := time.Now().Add(m.o.StopTimeout)
	for m.alive(bg, m.st.Pid, m.e.Spec().Comms...) {
		if time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(pollEvery)
			continue
		}
		_, kerr := m.h.Run(bg, "sh", "-c", killTreeScript, "sh", strconv.Itoa(m.st.Pid))
		if ctx.Err() != nil {
			return fmt.Errorf("host %s: stop %s (pid %d): %w: killed it (%v)", m.h.Name(), m.o.Engine, m.st.Pid, ctx.Err(), kerr)
		}
		return fmt.Errorf("host %s: stop %s (pid %d): still running %s after its agent's SIGTERM: killed it (%v; agent: %v)",
			m.h.Name(), m.o.Engine, m.st.Pid, m.o.StopTimeout, kerr, stopErr)
	}
	if stopErr != nil {
		return fmt.Errorf("host %s: stop %s: %w", m.h.Name(), m.o.Engine, stopErr)
	}
	m.stopped = true
	return nil
}

// killTreeScript kills the process $1 and its children: it is stopped first, so it forks
// no child between the two kills (a postmaster's backends are its children, each in a
// session of its own, which the process group does not reach).
const killTreeScript = `kill -STOP "$1" 2>/dev/null; pkill -KILL -P "$1"; kill -KILL "$1" 2>/dev/null; exit 0`
