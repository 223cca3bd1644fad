package study

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/result"
)

// helperBackend records what a study runs and starts on each host; the methods a study's
// Setup does not use are the embedded nil Backend's (a call panics).
type helperBackend struct {
	Backend
	dirs    map[string]string
	started []string // "host name argv..."
	execs   []string // "host argv..."
	// notReady fails this many `test -S` checks before the socket is there.
	notReady int
}

func (b *helperBackend) Dir(host string) string { return b.dirs[host] }

func (b *helperBackend) Exec(_ context.Context, host string, argv ...string) ([]byte, error) {
	line := host + " " + strings.Join(argv, " ")
	b.execs = append(b.execs, line)
	if argv[0] == "test" && b.notReady > 0 {
		b.notReady--
		return nil, errors.New("exit status 1")
	}
	return nil, nil
}

func (b *helperBackend) StartHelper(_ context.Context, host, name string, argv []string) error {
	b.started = append(b.started, host+" "+name+" "+strings.Join(argv, " "))
	return nil
}

// stubServer is a started server as the study sees it: its connection only.
type stubServer struct {
	engine.Server
	conn engine.Conn
}

func (s stubServer) Conn() engine.Conn { return s.conn }

// The remote-socket path: the server-side socat hop on the server host, from the server
// host's address across the wire to the server's socket; the client-side hop on the
// client host, in the backend's directory there; the driver of each socket cell dials the
// socket of its own host. Setup waits for the client's socket, then for a connection
// through the server's hop from the client host.
func TestTransportSetupStartsEachHopOnItsHost(t *testing.T) {
	tr := NewTransport(TransportOptions{Paths: TransportPaths, Bench: Bench{Threads: []int{1}, Workload: "oltp_read_only"}})
	b := &helperBackend{dirs: map[string]string{lab.Client: "/tmp/wirelab-app", lab.Server: "/tmp/wirelab-db"}, notReady: 2}
	srv := stubServer{conn: engine.Conn{Engine: engine.MariaDB, Host: "198.18.21.2", Port: 3306, Socket: "/tmp/wirelab-db/mariadb/mysqld.sock"}}
	e := &Env{Backend: b, Servers: []engine.Server{srv}}
	if err := tr.Setup(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"server socat-server socat TCP-LISTEN:3307,bind=198.18.21.2,reuseaddr,fork,backlog=1024 UNIX-CONNECT:/tmp/wirelab-db/mariadb/mysqld.sock",
		"client socat-client socat UNIX-LISTEN:/tmp/wirelab-app/remote-socket/server.sock,fork,reuseaddr,unlink-early,mode=777,backlog=1024 TCP:198.18.21.2:3307",
	}
	if strings.Join(b.started, "\n") != strings.Join(want, "\n") {
		t.Errorf("helpers started:\n%s\nwant:\n%s", strings.Join(b.started, "\n"), strings.Join(want, "\n"))
	}
	checks := strings.Join(b.execs, "\n")
	for _, w := range []string{"client mkdir -p -m 0755 /tmp/wirelab-app/remote-socket",
		"client test -S /tmp/wirelab-app/remote-socket/server.sock",
		"client socat -u /dev/null TCP:198.18.21.2:3307,connect-timeout=2"} {
		if !strings.Contains(checks, w) {
			t.Errorf("Setup did not run %q:\n%s", w, checks)
		}
	}
	if n := strings.Count(checks, "test -S"); n != 3 {
		t.Errorf("%d socket checks, want 3 (two before the socket is there)", n)
	}
	sockets := map[string]string{}
	for _, c := range tr.cells {
		sockets[c.Transport] = c.ClientHost + " " + c.Socket
		if c.Transport == "remote-tcp" && c.target(e) != "198.18.21.2" {
			t.Errorf("remote-tcp dials %q, want the server's own address across the wire", c.target(e))
		}
	}
	if sockets["socket"] != "server /tmp/wirelab-db/mariadb/mysqld.sock" ||
		sockets["remote-socket"] != "client /tmp/wirelab-app/remote-socket/server.sock" || sockets["local-tcp"] != "server " {
		t.Errorf("cells' sockets %v", sockets)
	}
}

// PostgreSQL on a real server host listens on its own port (15432), not the lab's 5432:
// every row dials that one, the socket rows name the socket file after it
// (.s.PGSQL.15432 in the server's socket directory), and the remote-socket hops carry the
// same file name: the server's on the server host, a directory of its own on the client.
func TestTransportOnAServersOwnPostgresPort(t *testing.T) {
	tr := NewTransport(TransportOptions{Paths: TransportPaths, Bench: Bench{Threads: []int{1}, Workload: "oltp_read_only", Engine: engine.Postgres}})
	b := &helperBackend{dirs: map[string]string{lab.Client: "/tmp/wirelab-app", lab.Server: "/tmp/wirelab-db"}}
	srv := stubServer{conn: engine.Conn{Engine: engine.Postgres, Host: "198.18.21.2", Port: 15432, Socket: "/tmp/wirelab-db/postgres/run"}}
	e := &Env{Backend: b, Servers: []engine.Server{srv}}
	if err := tr.Setup(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"server socat-server socat TCP-LISTEN:3307,bind=198.18.21.2,reuseaddr,fork,backlog=1024 UNIX-CONNECT:/tmp/wirelab-db/postgres/run/.s.PGSQL.15432",
		"client socat-client socat UNIX-LISTEN:/tmp/wirelab-app/remote-socket/.s.PGSQL.15432,fork,reuseaddr,unlink-early,mode=777,backlog=1024 TCP:198.18.21.2:3307",
	}
	if strings.Join(b.started, "\n") != strings.Join(want, "\n") {
		t.Errorf("helpers started:\n%s\nwant:\n%s", strings.Join(b.started, "\n"), strings.Join(want, "\n"))
	}
	got := map[string]string{}
	for _, c := range tr.cells {
		got[c.Transport] = fmt.Sprintf("%s %s %s:%d", c.ClientHost, c.Socket, c.target(e), c.port(e))
	}
	for path, w := range map[string]string{
		"socket":        "server /tmp/wirelab-db/postgres/run :15432",
		"local-tcp":     "server  127.0.0.1:15432",
		"remote-tcp":    "client  198.18.21.2:15432",
		"remote-socket": "client /tmp/wirelab-app/remote-socket :15432",
	} {
		if got[path] != w {
			t.Errorf("%s: %q, want %q", path, got[path], w)
		}
	}
}

// Without remote-socket nothing is started and socat is not needed; without local-tcp
// the server need not listen on 127.0.0.1.
func TestTransportNeedsFollowThePaths(t *testing.T) {
	tr := NewTransport(TransportOptions{Paths: []string{"socket", "remote-tcp"}, Bench: Bench{Threads: []int{1}}})
	b := &helperBackend{}
	srv := stubServer{conn: engine.Conn{Engine: engine.MariaDB, Host: "198.18.21.2", Socket: "/s"}}
	if err := tr.Setup(context.Background(), &Env{Backend: b, Servers: []engine.Server{srv}}); err != nil {
		t.Fatal(err)
	}
	if len(b.started)+len(b.execs) != 0 {
		t.Errorf("no remote-socket, yet Setup ran %v %v", b.started, b.execs)
	}
	n := tr.Needs()
	if len(n.Programs) != 0 || n.Servers[0].Loopback {
		t.Errorf("needs %+v, loopback %v: want no program and no loopback", n.Programs, n.Servers[0].Loopback)
	}
	all := NewTransport(TransportOptions{Paths: TransportPaths, Bench: Bench{Threads: []int{1}}}).Needs()
	got := fmt.Sprint(all.Programs)
	if !all.Servers[0].Loopback || !strings.Contains(got, "client socat") || !strings.Contains(got, "server socat") ||
		!strings.Contains(got, "--paths remote-socket") {
		t.Errorf("every path: programs %s, loopback %v; want socat on both hosts naming --paths, and loopback", got, all.Servers[0].Loopback)
	}
}

// A driver on the server's host shares that host's cores with the server; across the wire
// each side keeps its own host's.
func TestCellCoresFollowTheDriversHost(t *testing.T) {
	sep := result.Cores{Server: 48, Client: 2}
	if got := cellCores(sep, LoadCell{ClientHost: lab.Server}); got != (result.Cores{Shared: 48}) {
		t.Errorf("driver on the server host: %+v, want the server host's 48 cores shared", got)
	}
	if got := cellCores(sep, LoadCell{ClientHost: lab.Client}); got != sep {
		t.Errorf("driver on the client host: %+v, want %+v", got, sep)
	}
	if got := cellCores(result.Cores{Shared: 2}, LoadCell{ClientHost: lab.Server}); got != (result.Cores{Shared: 2}) {
		t.Errorf("the lab: %+v", got)
	}
}
