package study

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
)

// Channel is how a client's traffic crosses the wire: straight to the server, or
// through wirelab's tunnel (entry in the client host, exit in the server host).
type Channel string

// Channels a client's traffic can take across the wire.
const (
	ChannelDirect Channel = "direct"
	ChannelTunnel Channel = "tunnel"
)

// ParseChannel parses --channel: direct or tunnel.
func ParseChannel(s string) (Channel, error) {
	switch c := Channel(s); c {
	case ChannelDirect, ChannelTunnel:
		return c, nil
	}
	return "", fmt.Errorf("--channel %q: want %s or %s", s, ChannelDirect, ChannelTunnel)
}

// startTunnel starts `wirelab tunnel` (exit in the server host, entry in the client host)
// and points every tunnel cell at the entry.
func startTunnel(ctx context.Context, e *Env, o lab.TunnelOptions, cells []LoadCell) error {
	o.ServerPort = e.Servers[0].Conn().Port
	if x, ok := e.Servers[0].(*engine.External); ok {
		o.ServerHost = x.Conn().Host // the exit, in the server host, forwards on to it
	}
	addr, err := e.Backend.StartTunnel(ctx, e.Self, lab.Client, o)
	if err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("tunnel entry address %q: %w", addr, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return fmt.Errorf("tunnel entry port %q: %w", port, err)
	}
	for i := range cells {
		if c := &cells[i]; c.Channel == ChannelTunnel {
			c.Host, c.Port = host, n
		}
	}
	return nil
}
