package lab

import (
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
}

// TunnelArgv is the command line of one end in the lab, with mutual TLS from certDir.
func TunnelArgv(self string, role tunnel.Role, certDir string, o TunnelOptions) []string {
	return TunnelArgvAt(self, role, certDir, HostAddr[Server], o)
}

// TunnelArgvAt is the command line of one end whose exit listens on exitAddr (the server
// host's address across the wire, where the entry dials it) on TunnelExitPort; the entry
// listens on 127.0.0.1:TunnelEntryPort of its own host.
func TunnelArgvAt(self string, role tunnel.Role, certDir, exitAddr string, o TunnelOptions) []string {
	exit := net.JoinHostPort(exitAddr, strconv.Itoa(TunnelExitPort))
	listen, to := net.JoinHostPort("127.0.0.1", strconv.Itoa(TunnelEntryPort)), exit
	cert, key := tunnel.EntryCertFile, tunnel.EntryKeyFile
	if role == tunnel.Exit {
		port := o.ServerPort
		if port == 0 {
			port = 3306
		}
		host := o.ServerHost
		if host == "" {
			host = "127.0.0.1"
		}
		listen, to = exit, net.JoinHostPort(host, strconv.Itoa(port))
		cert, key = tunnel.ExitCertFile, tunnel.ExitKeyFile
	}
	argv := []string{self, "tunnel", string(role), "--listen", listen, "--to", to,
		"--tls-cert", filepath.Join(certDir, cert), "--tls-key", filepath.Join(certDir, key),
		"--tls-ca", filepath.Join(certDir, tunnel.CAFile), "--stats", "--stats-every", "10s"}
	return append(argv, o.Knobs.Args(role)...)
}

// StartTunnel runs a tunnel exit next to the server (o.ServerPort) and an entry in entryHost,
// with fresh mutual-TLS certificates, and waits until both listen. Clients in entryHost
// then reach the server at the returned address. Both ends are lab processes: Down stops them.
func (l *Lab) StartTunnel(ctx context.Context, self, entryHost string, o TunnelOptions) (string, error) {
	dir := filepath.Join(l.State.TempDir, "tunnel-certs")
	if err := tunnel.GenerateCerts(dir, []string{HostAddr[Server]}); err != nil {
		return "", fmt.Errorf("start tunnel: %w", err)
	}
	ends := []struct {
		host string
		role tunnel.Role
		port int
	}{{Server, tunnel.Exit, TunnelExitPort}, {entryHost, tunnel.Entry, TunnelEntryPort}}
	for _, e := range ends {
		name := "tunnel-" + string(e.role)
		pid, err := l.StartProc(e.host, name, TunnelArgv(self, e.role, dir, o), nil)
		if err != nil {
			return "", fmt.Errorf("start tunnel: %w", err)
		}
		if err := l.WaitListen(ctx, e.host, e.port, pid, name); err != nil {
			return "", fmt.Errorf("start tunnel %s: %w", e.role, err)
		}
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(TunnelEntryPort)), nil
}

// WaitListen waits until something listens on TCP port inside host, or the process of
// the named lab helper exits (then its log's tail explains why).
func (l *Lab) WaitListen(ctx context.Context, host string, port, pid int, name string) error {
	logPath := filepath.Join(l.State.TempDir, name+".log")
	deadline := time.Now().Add(15 * time.Second)
	for {
		out, err := l.Exec(ctx, host, "ss", "-Hltn", "sport = :"+strconv.Itoa(port))
		if err == nil && strings.TrimSpace(string(out)) != "" {
			return nil
		}
		if len(alive([]int{pid})) == 0 {
			return fmt.Errorf("exited before listening on :%d:\n%s", port, tailFile(logPath, 10))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on :%d after 15s:\n%s", port, tailFile(logPath, 10))
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
