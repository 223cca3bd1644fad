package study

import (
	"context"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
)

// RunOptions is `wirelab run`: one series over thread counts on one wire.
type RunOptions struct {
	Bench       Bench
	Link        link.Condition
	Compression bool // MySQL protocol compression (zlib)
	TLS         bool
	Channel     Channel           // ChannelDirect or ChannelTunnel
	Tunnel      lab.TunnelOptions // with ChannelTunnel
}

// Run is the study behind `wirelab run`.
type Run struct {
	o RunOptions
	matrix
}

// NewRun builds the run's cells.
func NewRun(o RunOptions) *Run {
	r := &Run{o: o, matrix: o.Bench.matrix()}
	series := r.Series()
	o.Bench.repeats(func(rep, t int) {
		c := o.Bench.tcpCell(o.Bench.cell("run", series, t, rep))
		c.Compression, c.TLS, c.Channel = o.Compression, o.TLS, o.Channel
		r.cells = append(r.cells, c)
	})
	return r
}

// Series names what the run measured: "20mbit+compression", "unlimited+tunnel-auto".
func (r *Run) Series() string {
	s := link.FormatRate(r.o.Link.RateBps)
	if r.o.Compression {
		s += "+compression"
	}
	if r.o.TLS {
		s += "+tls"
	}
	if r.o.Channel == ChannelTunnel {
		s += "+tunnel-" + string(r.o.Tunnel.Compress)
	}
	return s
}

// Name is "run".
func (r *Run) Name() string { return "run" }

// Needs is a client and a server on the run's wire, checked when it is shaped.
func (r *Run) Needs() Needs {
	spec := r.o.Bench.spec([]string{r.Series()}, r.o.Link)
	if r.o.Channel == ChannelTunnel {
		spec.Extra = map[string]string{"tunnel": r.o.Tunnel.EntryArgs()}
	}
	n := r.o.Bench.needs(r.o.Link, r.o.Link.Shaped(), spec, nil)
	n.Tunnel = r.o.Channel == ChannelTunnel
	n.ClientThreads = r.o.Bench.Threads
	return n
}

// Setup starts the tunnel when the run goes through it.
func (r *Run) Setup(ctx context.Context, e *Env) error {
	if r.o.Channel != ChannelTunnel {
		return nil
	}
	return startTunnel(ctx, e, r.o.Tunnel, r.cells)
}
