package cli

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/tunnel"
)

// tunnelFlags are the tunnel knobs of commands that put `wirelab tunnel` in the lab.
type tunnelFlags struct {
	compress *string
	level    *string
	mux      *string
	window   *string
	group    *string
	timeout  *time.Duration
}

// tunnelFlagGiven is the first --tunnel-* flag the user set, "" for none: a command
// refuses it where nothing it runs goes through the tunnel.
func tunnelFlagGiven(fs *flag.FlagSet) string {
	return firstGiven(fs, func(name string) bool { return strings.HasPrefix(name, "tunnel-") })
}

// addTunnelFlags registers the tunnel knobs; compress is the command's default mode.
func addTunnelFlags(fs *flag.FlagSet, compress string) *tunnelFlags {
	return &tunnelFlags{
		compress: fs.String("tunnel-compress", compress, "with the tunnel channel: auto, zstd or off"),
		level:    fs.String("tunnel-level", "auto", "with the tunnel channel: zstd level, auto or 1..22"),
		mux:      fs.String("tunnel-mux", string(tunnel.DefaultMux), "with the tunnel channel: on = all client connections over one WAN connection, off = one each"),
		window:   fs.String("tunnel-window", "", "with the tunnel channel: zstd window per direction (default: the tunnel's, by --tunnel-mux)"),
		group:    fs.String("tunnel-group-max-size", tunnel.FormatSize(tunnel.DefaultGroupMaxSize), "with the tunnel channel: largest group (64KiB, 1MiB, ...)"),
		timeout:  fs.Duration("tunnel-group-timeout", tunnel.DefaultGroupTimeout, "with the tunnel channel: longest a group waits for more bytes"),
	}
}

// options validates the flags with the tunnel's own rules, so a bad value is refused before
// the lab exists rather than by a tunnel end that fails to start.
func (t *tunnelFlags) options() (lab.TunnelOptions, error) {
	mode, err := tunnel.ParseMode(*t.compress)
	if err != nil {
		return lab.TunnelOptions{}, fmt.Errorf("--tunnel-compress: %w", err)
	}
	size, err := tunnel.ParseSize(*t.group)
	if err != nil {
		return lab.TunnelOptions{}, fmt.Errorf("--tunnel-group-max-size: %w", err)
	}
	level, err := tunnel.ParseLevel(*t.level)
	if err != nil {
		return lab.TunnelOptions{}, fmt.Errorf("--tunnel-level: %w", err)
	}
	mux, err := tunnel.ParseMux(*t.mux)
	if err != nil {
		return lab.TunnelOptions{}, fmt.Errorf("--tunnel-mux: %w", err)
	}
	var window int64
	if *t.window != "" {
		if window, err = tunnel.ParseSize(*t.window); err != nil {
			return lab.TunnelOptions{}, fmt.Errorf("--tunnel-window: %w", err)
		}
	}
	cfg := tunnel.Config{Role: tunnel.Entry, Listen: "127.0.0.1:0", To: "127.0.0.1:1", Compress: mode,
		Level: level, Mux: mux, Window: int(window), GroupMaxSize: int(size), GroupTimeout: *t.timeout}
	if err := cfg.Validate(); err != nil {
		return lab.TunnelOptions{}, fmt.Errorf("--tunnel-*: %w", err)
	}
	return lab.TunnelOptions{Compress: string(mode), Level: level, Mux: string(mux), Window: *t.window,
		GroupMaxSize: *t.group, GroupTimeout: *t.timeout}, nil
}
