package study

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/wirelab/wirelab/internal/lab"
)

// Channels a client's traffic can take across the wire.
const (
	ChannelDirect = "direct"
	ChannelTunnel = "tunnel"
)

// TunnelPrelude starts `wirelab tunnel` (exit in the server host, entry in the client
// host) and points every tunnel cell at the entry.
func TunnelPrelude(o lab.TunnelOptions) func(ctx context.Context, eng *Engine, plan *Plan) error {
	return func(ctx context.Context, eng *Engine, plan *Plan) error {
		addr, err := eng.Lab.StartTunnel(ctx, eng.Self, lab.Client, o)
		if err != nil {
			return err
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return fmt.Errorf("tunnel entry address %q: %w", addr, err)
		}
		n, _ := strconv.Atoi(port)
		for i := range plan.Cells {
			if c := &plan.Cells[i]; c.Channel == ChannelTunnel {
				c.Host, c.Port = host, n
			}
		}
		return nil
	}
}
