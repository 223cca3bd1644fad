package study

import (
	"context"
	"fmt"
	"path"
	"slices"
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

// NewTransport builds the study's cells; socket paths are filled in by Setup once the
// server runs.
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
			// Socket paths keep the port too: libpq names its socket file after it. Setup
			// sets the running server's own (a real server host's PostgreSQL is not on the
			// lab's port).
			c.Port = o.Bench.port()
			if path == "local-tcp" {
				c.Host = "127.0.0.1"
			}
			// remote-tcp leaves Host empty: the server's own address across the wire, the
			// lab server host's or a real server host's data address.
			t.cells = append(t.cells, c)
		}
	})
	return t
}

// Name is "transport".
func (t *Transport) Name() string { return "transport" }

// Needs is a client and a server on the study's wire, checked once. The server listens on
// 127.0.0.1 too when local-tcp is measured; remote-socket needs socat on both hosts.
func (t *Transport) Needs() Needs {
	spec := t.o.Bench.spec(t.o.Paths, t.o.Link)
	spec.Extra = map[string]string{"sysbench_extra": strings.Join(TransportExtra, " ")}
	n := t.o.Bench.needs(t.o.Link, true, spec, nil)
	n.Servers[0].Loopback = slices.Contains(t.o.Paths, "local-tcp")
	if slices.Contains(t.o.Paths, "remote-socket") {
		why := "--paths remote-socket runs a socat hop on the client and on the server host"
		n.Programs = append(n.Programs, Program{Host: lab.Client, Name: "socat", Why: why},
			Program{Host: lab.Server, Name: "socat", Why: why})
	}
	return n
}

// Setup points the socket cells at the server's socket, every cell but remote-tcp (which
// leaves address and port to the server, LoadCell.port) at the server's own port, and,
// for remote-socket, starts the study's two socat hops. MariaDB's clients take the socket
// file; libpq takes the directory holding .s.PGSQL.<port>, so on PostgreSQL the
// client-side hop listens inside a directory of its own, on a file named after the
// server's port as well.
func (t *Transport) Setup(ctx context.Context, e *Env) error {
	conn := e.Servers[0].Conn()
	remote := path.Join(e.Backend.Dir(lab.Client), "remote-socket")
	remoteConn := conn
	remoteConn.Socket = remote
	if conn.Engine != engine.Postgres {
		remoteConn.Socket = path.Join(remote, "server.sock")
	}
	needSocat := false
	for i := range t.cells {
		c := &t.cells[i]
		switch c.Transport {
		case "socket":
			c.Socket, c.Port = conn.Socket, conn.Port
		case "local-tcp":
			c.Port = conn.Port
		case "remote-socket":
			c.Socket, c.Port, needSocat = remoteConn.Socket, conn.Port, true
		}
	}
	if !needSocat {
		return nil
	}
	if _, err := e.Backend.Exec(ctx, lab.Client, "mkdir", "-p", "-m", "0755", remote); err != nil {
		return fmt.Errorf("transport: %w", err)
	}
	return StartSocatHops(ctx, e.Backend, SocatHops{ServerSock: conn.SocketFile(), ServerAddr: conn.Host,
		ClientSock: remoteConn.SocketFile()})
}

// SocatHops is the remote-socket path: a unix socket on the client host whose every
// connection socat carries as TCP across the wire to a socat next to the server, which
// hands it to the server's own unix socket. The load driver runs on the client and dials
// ClientSock; only the middle crosses the wire. Both hops run on their hosts in the lab
// and on real hosts alike (server-side on the server host, client-side on the client
// host), so the row means the same on either: a "socket" to a server across the wire.
type SocatHops struct {
	ServerSock string // the server's socket file, on the server host
	ServerAddr string // the server host's address across the wire, where its hop listens
	ClientSock string // the socket the client-side hop creates, on the client host
}

// argv are the two hops' command lines: the server-side hop, then the client-side one.
func (h SocatHops) argv() (server, client []string) {
	port := strconv.Itoa(socatPort)
	server = []string{"socat",
		"TCP-LISTEN:" + port + ",bind=" + h.ServerAddr + ",reuseaddr,fork,backlog=1024",
		"UNIX-CONNECT:" + h.ServerSock}
	client = []string{"socat",
		"UNIX-LISTEN:" + h.ClientSock + ",fork,reuseaddr,unlink-early,mode=777,backlog=1024",
		"TCP:" + h.ServerAddr + ":" + port}
	return server, client
}

// StartSocatHops starts the pair on b's hosts (helpers: b.Down stops them) and waits until
// the client-side socket exists and the server side accepts TCP from the client host.
func StartSocatHops(ctx context.Context, b Backend, h SocatHops) error {
	server, client := h.argv()
	if err := b.StartHelper(ctx, lab.Server, "socat-server", server); err != nil {
		return err
	}
	if err := b.StartHelper(ctx, lab.Client, "socat-client", client); err != nil {
		return err
	}
	// One connection through the server-side hop from the client host: socat copies
	// /dev/null to it and exits 0 once it could connect.
	probe := []string{"socat", "-u", "/dev/null", "TCP:" + h.ServerAddr + ":" + strconv.Itoa(socatPort) + ",connect-timeout=2"}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := b.Exec(ctx, lab.Client, "test", "-S", h.ClientSock)
		if err == nil {
			if _, err = b.Exec(ctx, lab.Client, probe...); err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("socat hops did not come up within 10s: %w%s%s", err,
				helperLog(ctx, b, lab.Server, "socat-server"), helperLog(ctx, b, lab.Client, "socat-client"))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// helperLog is the end of a helper's log as an error's last lines, "" when unreadable.
func helperLog(ctx context.Context, b Backend, host, name string) string {
	file := path.Join(b.Dir(host), name+".log")
	out, err := b.Exec(context.WithoutCancel(ctx), host, "tail", "-n", "5", "--", file)
	if err != nil || len(strings.TrimSpace(string(out))) == 0 {
		return ""
	}
	return "\n" + file + " on " + host + ":\n  " + strings.ReplaceAll(strings.TrimRight(string(out), "\n"), "\n", "\n  ")
}
