package hosts

import (
	"context"
	"errors"
	"fmt"
	"net"
)

// Dialer is a Host that opens connections from the host itself: a unix socket on it, or a
// TCP address as the host reaches it. Through an SSH host the connection travels inside
// the SSH connection (direct-tcpip, direct-streamlocal), so it takes the SSH port's path,
// which shaping never touches: how wirelab talks SQL to a server on a shaped host.
type Dialer interface {
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}

// ErrNoDial means the host cannot open connections for wirelab (a dry run's host).
var ErrNoDial = errors.New("this host opens no connections")

// DialContext implements Dialer over the SSH connection; network is "tcp" or "unix". The
// sshd must allow forwarding (OpenSSH's AllowTcpForwarding and AllowStreamLocalForwarding,
// both on by default), and a unix socket is opened as the login user.
func (s *SSH) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := s.client.DialContext(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("host %s: open %s %s through SSH (the sshd must allow forwarding: AllowTcpForwarding, AllowStreamLocalForwarding): %w",
			s.cfg.Name, network, addr, err)
	}
	return c, nil
}

// DialContext implements Dialer for a dry run: it prints the connection and opens none.
func (d *DryHost) DialContext(_ context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	fmt.Fprintf(d.W, "%s: # connect to %s %s through SSH (wirelab's SQL)\n", d.Host, network, addr)
	d.mu.Unlock()
	return nil, fmt.Errorf("host %s: %s %s: %w", d.Host, network, addr, ErrNoDial)
}
