package study

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
)

// Channels a client's traffic can take across the wire.
const (
	ChannelDirect = "direct"
	ChannelTunnel = "tunnel"
)

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
