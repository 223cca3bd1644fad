package study

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
)

// TransportPaths are the four ways to reach the server in the unix-socket-vs-TCP study, in the
// study's order (the first is the 100% reference).
var TransportPaths = []string{"socket", "local-tcp", "remote-tcp", "remote-socket"}

// TransportExtra is the study's workload: 25 point selects and a 5-row range per
// transaction, no BEGIN/COMMIT, 95th percentile.
var TransportExtra = []string{"--point-selects=25", "--range_size=5", "--skip_trx=on", "--percentile=95"}

// socatPort is where the server-side socat exposes the server's socket over TCP.
const socatPort = 3307

// ParsePaths validates a comma-separated subset of TransportPaths.
func ParsePaths(v string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		ok := false
		for _, p := range TransportPaths {
			ok = ok || p == f
		}
		if !ok {
			return nil, fmt.Errorf("--paths %q: %q is not a path; want a comma-separated subset of %s", v, f, strings.Join(TransportPaths, ","))
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out, nil
}

// TransportOptions is the unix-socket-vs-TCP study: every path at the same thread counts.
type TransportOptions struct {
	Bench Bench
	Paths []string
	Link  link.Condition
}

// Transport is the transport study.
type Transport struct {
	o TransportOptions
	matrix
}

// NewTransport builds the study's cells; socket paths are filled in by Setup once the lab
// exists.
func NewTransport(o TransportOptions) *Transport {
	t := &Transport{o: o, matrix: o.Bench.matrix()}
	o.Bench.repeats(func(r, th int) {
		for _, path := range o.Paths {
			c := o.Bench.cell("transport", path, th, r)
			c.Transport, c.Channel = path, ChannelDirect
			c.Extra = append([]string(nil), TransportExtra...)
			switch path {
			case "socket", "local-tcp":
				c.ClientHost = lab.Server
			default:
				c.ClientHost = lab.Client
			}
			// Socket paths keep the port too: libpq names its socket file after it.
			c.Port = o.Bench.port()
			if path == "local-tcp" {
				c.Host = "127.0.0.1"
			}
			if path == "remote-tcp" {
				c.Host = lab.HostAddr[lab.Server]
			}
			t.cells = append(t.cells, c)
		}
	})
	return t
}

// Name is "transport".
func (t *Transport) Name() string { return "transport" }

// Needs is a client and a server on the study's wire, checked once.
func (t *Transport) Needs() Needs {
	spec := t.o.Bench.spec(t.o.Paths, t.o.Link)
	spec.Extra = map[string]string{"sysbench_extra": strings.Join(TransportExtra, " ")}
	return t.o.Bench.needs(t.o.Link, true, spec, nil)
}

// Setup points the socket cells at the server's socket and, for remote-socket, starts the
// study's two socat hops: TCP-LISTEN→UNIX-CONNECT next to the server, UNIX-LISTEN→TCP on
// the client; both are lab processes, stopped by teardown. MariaDB's clients take the
// socket file; libpq takes the directory holding .s.PGSQL.<port>, so on PostgreSQL the
// client-side hop listens inside a directory of its own.
func (t *Transport) Setup(ctx context.Context, e *Env) error {
	conn := e.Servers[0].Conn()
	remote := filepath.Join(e.Lab.State.TempDir, "remote-socket")
	if err := os.MkdirAll(remote, 0o755); err != nil {
		return fmt.Errorf("transport: %w", err)
	}
	remoteConn := conn
	remoteConn.Socket = remote
	if conn.Engine != engine.Postgres {
		remoteConn.Socket = filepath.Join(remote, "server.sock")
	}
	needSocat := false
	for i := range t.cells {
		c := &t.cells[i]
		switch c.Transport {
		case "socket":
			c.Socket = conn.Socket
		case "remote-socket":
			c.Socket, needSocat = remoteConn.Socket, true
		}
	}
	if !needSocat {
		return nil
	}
	return StartSocatHops(ctx, e.Lab, conn.SocketFile(), remoteConn.SocketFile())
}

// StartSocatHops runs the study's socat pair and waits until the client-side socket exists
// and the server side accepts TCP.
func StartSocatHops(ctx context.Context, l *lab.Lab, serverSock, clientSock string) error {
	port := strconv.Itoa(socatPort)
	if _, err := l.StartProc(lab.Server, "socat-server", []string{"socat",
		"TCP-LISTEN:" + port + ",bind=" + lab.HostAddr[lab.Server] + ",reuseaddr,fork,backlog=1024",
		"UNIX-CONNECT:" + serverSock}, nil); err != nil {
		return err
	}
	if _, err := l.StartProc(lab.Client, "socat-client", []string{"socat",
		"UNIX-LISTEN:" + clientSock + ",fork,reuseaddr,unlink-early,mode=777,backlog=1024",
		"TCP:" + lab.HostAddr[lab.Server] + ":" + port}, nil); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := os.Stat(clientSock)
		if err == nil {
			if _, perr := l.Exec(ctx, lab.Client, "bash", "-c", "exec 3<>/dev/tcp/"+lab.HostAddr[lab.Server]+"/"+port); perr == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("socat hops did not come up within 10s (see %s/socat-*.log)", l.State.TempDir)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
