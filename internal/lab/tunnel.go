package lab

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/tunnel"
)

// Ports of the tunnel ends: the exit listens on the server host's lab address, the entry
// on loopback inside the host whose client uses it.
const (
	TunnelExitPort  = 4406
	TunnelEntryPort = 3307
)

// TunnelOptions are what a lab passes to both ends of `wirelab tunnel`: the tunnel's own
// knobs (zero values = the tunnel's defaults) and where the exit forwards to.
type TunnelOptions struct {
	tunnel.Knobs
	// ServerPort is the database server's port the exit forwards to; 0 = MariaDB's 3306.
	ServerPort int
	// ServerHost is the address the exit forwards to: "" = 127.0.0.1, the server host's
	// own database; an existing server's address, which the server host routes to.
	ServerHost string
	// ExitMetrics and EntryMetrics are where each end serves Prometheus metrics
	// (host:port on its own host); "" serves none.
	ExitMetrics, EntryMetrics string
}

// TunnelEnd is one end of the tunnel as a lab or a set of real hosts starts it: a helper
// process that listens on Port of its host, reads Certs (file names in Config's certificate
// directory) and runs Config.
type TunnelEnd struct {
	Name   string // "tunnel-exit" or "tunnel-entry": the helper's name, its log Name+".log"
	Port   int
	Certs  []string
	Config tunnel.Config
}

// TunnelEnds are the exit, listening on exitAddr (the server host's address across the
// wire, where the entry dials it) on TunnelExitPort and forwarding to o's server, and an
// entry on 127.0.0.1:TunnelEntryPort of its own host; both with mutual TLS from certDir,
// a stats line every 10 s, and open connections closed at once when stopped (a lab stops a
// tunnel to tear it down, and a replication stream would hold a drain to its timeout).
func TunnelEnds(certDir, exitAddr string, o TunnelOptions) (exit, entry TunnelEnd) {
	server := net.JoinHostPort(cmp.Or(o.ServerHost, "127.0.0.1"), strconv.Itoa(cmp.Or(o.ServerPort, 3306)))
	exitAt := net.JoinHostPort(exitAddr, strconv.Itoa(TunnelExitPort))
	end := func(role tunnel.Role, port int, listen, to, cert, key string) TunnelEnd {
		c := o.Knobs.Config(role)
		c.Listen, c.To, c.PrintStats, c.StatsEvery = listen, to, true, 10*time.Second
		c.DrainTimeout = 0 // --drain-timeout 0s: a stop closes open connections at once
		c.MetricsListen = map[tunnel.Role]string{tunnel.Exit: o.ExitMetrics, tunnel.Entry: o.EntryMetrics}[role]
		c.TLSCert, c.TLSKey, c.TLSCA = filepath.Join(certDir, cert), filepath.Join(certDir, key), filepath.Join(certDir, tunnel.CAFile)
		return TunnelEnd{Name: "tunnel-" + string(role), Port: port, Certs: []string{tunnel.CAFile, cert, key}, Config: c}
	}
	return end(tunnel.Exit, TunnelExitPort, exitAt, server, tunnel.ExitCertFile, tunnel.ExitKeyFile),
		end(tunnel.Entry, TunnelEntryPort, net.JoinHostPort("127.0.0.1", strconv.Itoa(TunnelEntryPort)), exitAt,
			tunnel.EntryCertFile, tunnel.EntryKeyFile)
}

// EntryArgs are the flags of the entry a lab runs with o (certificates in CERTS), as a
// run's spec records them.
func (o TunnelOptions) EntryArgs() string {
	_, entry := TunnelEnds("CERTS", HostAddr[Server], o)
	return strings.Join(entry.Config.Args(), " ")
}

// StartTunnel runs a tunnel exit next to the server (o.ServerPort) and an entry in entryHost,
// with fresh mutual-TLS certificates, and waits until both listen. Clients in entryHost
// then reach the server at the returned address. Both ends are lab processes: Down stops them.
func (l *Lab) StartTunnel(ctx context.Context, self, entryHost string, o TunnelOptions) (string, error) {
	dir := filepath.Join(l.State.TempDir, "tunnel-certs")
	if err := tunnel.GenerateCerts(dir, []string{HostAddr[Server]}); err != nil {
		return "", fmt.Errorf("start tunnel: %w", err)
	}
	exit, entry := TunnelEnds(dir, HostAddr[Server], o)
	for _, he := range []struct {
		host string
		end  TunnelEnd
	}{{Server, exit}, {entryHost, entry}} {
		e := he.end
		pid, err := l.StartProc(he.host, e.Name, e.Config.Argv(self), nil)
		if err != nil {
			return "", fmt.Errorf("start tunnel: %w", err)
		}
		logPath := filepath.Join(l.State.TempDir, e.Name+".log")
		err = AwaitListen(ctx, e.Port, ListenProbe{
			Listening: func() bool {
				out, err := l.Exec(ctx, he.host, ListenCheck(e.Port)...)
				return err == nil && strings.TrimSpace(string(out)) != ""
			},
			Exited: func() bool { return len(alive([]int{pid})) == 0 },
			Tail:   func() string { return ":\n" + tailFile(logPath, 10) },
		})
		if err != nil {
			return "", fmt.Errorf("start tunnel %s: %w", e.Config.Role, err)
		}
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(TunnelEntryPort)), nil
}

// ListenCheck is the command that prints a line when something listens on TCP port.
func ListenCheck(port int) []string { return []string{"ss", "-Hltn", "sport = :" + strconv.Itoa(port)} }

// ListenProbe looks at a helper process that should come to listen: whether it does,
// whether it exited, and what its log says (for the error).
type ListenProbe struct {
	Listening, Exited func() bool
	Tail              func() string
}

// listenWithin bounds how long AwaitListen waits.
const listenWithin = 15 * time.Second

// AwaitListen polls p until the process listens on port, exits (an error with its log's
// tail), listenWithin passes or ctx ends.
func AwaitListen(ctx context.Context, port int, p ListenProbe) error {
	deadline := time.Now().Add(listenWithin)
	for {
		if p.Listening() {
			return nil
		}
		if p.Exited() {
			return fmt.Errorf("exited before listening on :%d%s", port, p.Tail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on :%d after %s%s", port, listenWithin, p.Tail())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func tailFile(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
