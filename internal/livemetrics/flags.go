package livemetrics

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net"

	"github.com/wirelab/wirelab/internal/flagx"
	"github.com/wirelab/wirelab/internal/promserve"
)

// Flags are a measuring command's --metrics-listen and --allow-wildcard.
type Flags struct {
	listen        *string
	allowWildcard *bool
}

// AddFlags registers the flags on fs.
func AddFlags(fs *flag.FlagSet) *Flags {
	return &Flags{
		listen: fs.String("metrics-listen", "", "while measuring, serve live Prometheus metrics at /metrics on `host:port`: "+
			"each point's per-second TPS and latency, wire bytes each way, CPU by side and the delay line's, labelled by study, series, channel, threads and link "+
			"(docs/live-metrics.md; no wildcard without --allow-wildcard)"),
		allowWildcard: fs.Bool("allow-wildcard", false, "allow --metrics-listen on 0.0.0.0, :: or an empty host"),
	}
}

// Addr is --metrics-listen, checked as every listener's address is (flagx.CheckListen);
// "" when it is not given.
func (f *Flags) Addr() (string, error) {
	if *f.listen == "" {
		if *f.allowWildcard {
			return "", errors.New("--allow-wildcard applies only with --metrics-listen")
		}
		return "", nil
	}
	return *f.listen, flagx.CheckListen("metrics-listen", *f.listen, *f.allowWildcard)
}

// Endpoint is a Registry served on an address of its own while a command measures.
type Endpoint struct {
	*Registry
	srv *promserve.Server
}

// Listen listens on addr for a new Registry of a machine of cpus CPUs; Serve serves it.
func Listen(addr string, cpus int) (*Endpoint, error) {
	r := New(cpus)
	srv, err := promserve.Listen(addr, r.Handler())
	if err != nil {
		return nil, err
	}
	return &Endpoint{Registry: r, srv: srv}, nil
}

// Addr is where the metrics are served.
func (e *Endpoint) Addr() net.Addr { return e.srv.Addr() }

// Serve serves the registry until ctx ends.
func (e *Endpoint) Serve(ctx context.Context, log *slog.Logger) {
	e.srv.Serve(ctx, log, "live metrics")
}
