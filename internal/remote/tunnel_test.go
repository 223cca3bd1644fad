package remote

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/hosts"
	"github.com/wirelab/wirelab/internal/inventory"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/tunnel"
)

// tunnelBackend is a Backend of two fake hosts, staged: the server at 198.18.40.2 and
// the replica across the wire.
func tunnelBackend(srv, rep *fakeHost) *Backend {
	stage := func(d string) hosts.Staged { return hosts.Staged{Dir: d, Agent: d + "/wirelab"} }
	return &Backend{o: Options{}, engine: mariadbEngine{}, far: lab.Replica, log: slog.New(slog.DiscardHandler),
		server:  &host{inv: inventory.Host{Name: "db1", Address: "198.18.40.2"}, h: srv, stage: stage("/tmp/wirelab-s")},
		clients: []*host{{inv: inventory.Host{Name: "rep", Address: "198.18.40.1"}, h: rep, stage: stage("/tmp/wirelab-r")}}}
}

// The tunnel's ends start on their hosts from the staged binary, each with the CA and its
// own pair only, the exit on the server's data address forwarding to the source there,
// the entry on the replica's loopback; both are tracked for Down.
func TestStartTunnelOnHosts(t *testing.T) {
	srv, rep := newFakeHost(), newFakeHost()
	for _, f := range []*fakeHost{srv, rep} {
		f.answers["ss -Hltn"] = "LISTEN 0 4096 0.0.0.0:1 0.0.0.0:*\n"
	}
	b := tunnelBackend(srv, rep)
	entry, err := b.StartTunnel(context.Background(), "/not/used", lab.Replica, lab.TunnelOptions{})
	if err != nil || entry != "127.0.0.1:3307" {
		t.Fatalf("StartTunnel = %q, %v", entry, err)
	}
	exitStart := strings.Join(srv.lines(), "\n")
	for _, w := range []string{"start tunnel-exit: /tmp/wirelab-s/wirelab tunnel exit --listen 198.18.40.2:4406 --to 198.18.40.2:3306",
		"--tls-cert /tmp/wirelab-s/tunnel-certs/exit.pem", ">> /tmp/wirelab-s/tunnel-exit.log", "mkdir -p -m 0700 /tmp/wirelab-s/tunnel-certs"} {
		if !strings.Contains(exitStart, w) {
			t.Errorf("the server host lacks %q:\n%s", w, exitStart)
		}
	}
	if s := strings.Join(rep.lines(), "\n"); !strings.Contains(s, "start tunnel-entry: /tmp/wirelab-r/wirelab tunnel entry --listen 127.0.0.1:3307 --to 198.18.40.2:4406") {
		t.Errorf("the replica host's entry:\n%s", s)
	}
	for _, c := range []struct {
		f          *fakeHost
		dir        string
		has, hasnt []string
	}{{srv, "/tmp/wirelab-s/tunnel-certs/", []string{tunnel.CAFile, tunnel.ExitCertFile, tunnel.ExitKeyFile}, []string{tunnel.EntryKeyFile}},
		{rep, "/tmp/wirelab-r/tunnel-certs/", []string{tunnel.CAFile, tunnel.EntryCertFile, tunnel.EntryKeyFile}, []string{tunnel.ExitKeyFile}}} {
		for _, n := range c.has {
			if b, err := c.f.ReadFile(context.Background(), c.dir+n); err != nil || !strings.Contains(string(b), "-----BEGIN") {
				t.Errorf("%s%s: %q, %v: want a PEM file", c.dir, n, b, err)
			}
		}
		for _, n := range c.hasnt {
			if _, err := c.f.ReadFile(context.Background(), c.dir+n); err == nil {
				t.Errorf("%s%s was copied: an end gets its own key only", c.dir, n)
			}
		}
	}
	if len(b.procs) != 2 {
		t.Errorf("%d processes tracked for Down, want both ends", len(b.procs))
	}
}

// An end that exits before it listens fails the start with the tail of its log.
func TestStartTunnelEndExits(t *testing.T) {
	srv, rep := newFakeHost(), newFakeHost()
	srv.onStart = func(f *fakeHost, pid int) {
		f.remove(fmt.Sprintf("/proc/%d/stat", pid))
		f.set("/tmp/wirelab-s/tunnel-exit.log", "tunnel exit: listen tcp 198.18.40.2:4406: bind: address already in use\n")
	}
	_, err := tunnelBackend(srv, rep).StartTunnel(context.Background(), "", lab.Replica, lab.TunnelOptions{})
	if err == nil || !strings.Contains(err.Error(), "exited before listening on :4406") || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("an exit that died: %v, want the port and its log's tail", err)
	}
	if len(rep.lines()) != 0 {
		t.Errorf("the entry was started after the exit failed: %v", rep.lines())
	}
	if _, err := tunnelBackend(srv, rep).StartTunnel(context.Background(), "", lab.Server, lab.TunnelOptions{}); err == nil {
		t.Error("an entry on the server's own host was accepted")
	}
}

// With the load split among several client hosts, every client gets an entry on its own
// loopback (the cells all dial 127.0.0.1:3307 on their host), each with the entry's pair;
// one exit on the server serves them all.
func TestStartTunnelOnEveryClient(t *testing.T) {
	srv, c1, c2 := newFakeHost(), newFakeHost(), newFakeHost()
	for _, f := range []*fakeHost{srv, c1, c2} {
		f.answers["ss -Hltn"] = "LISTEN 0 4096 0.0.0.0:1 0.0.0.0:*\n"
	}
	b := tunnelBackend(srv, c1)
	b.far = lab.Client
	b.clients = append(b.clients, &host{inv: inventory.Host{Name: "app2", Address: "198.18.40.3"}, h: c2,
		stage: hosts.Staged{Dir: "/tmp/wirelab-c2", Agent: "/tmp/wirelab-c2/wirelab"}})
	entry, err := b.StartTunnel(context.Background(), "", lab.Client, lab.TunnelOptions{})
	if err != nil || entry != "127.0.0.1:3307" {
		t.Fatalf("StartTunnel = %q, %v", entry, err)
	}
	for i, c := range []struct {
		f   *fakeHost
		dir string
	}{{c1, "/tmp/wirelab-r"}, {c2, "/tmp/wirelab-c2"}} {
		if s := strings.Join(c.f.lines(), "\n"); !strings.Contains(s, "start tunnel-entry: "+c.dir+"/wirelab tunnel entry --listen 127.0.0.1:3307 --to 198.18.40.2:4406") {
			t.Errorf("client %d's entry:\n%s", i+1, s)
		}
		if b, err := c.f.ReadFile(context.Background(), c.dir+"/tunnel-certs/"+tunnel.EntryKeyFile); err != nil || !strings.Contains(string(b), "-----BEGIN") {
			t.Errorf("client %d's entry key: %v", i+1, err)
		}
	}
	if n := strings.Count(strings.Join(srv.lines(), "\n"), "start tunnel-exit"); n != 1 {
		t.Errorf("%d exits started, want one for every entry", n)
	}
	if len(b.procs) != 3 {
		t.Errorf("%d processes tracked for Down, want the exit and two entries", len(b.procs))
	}
}
