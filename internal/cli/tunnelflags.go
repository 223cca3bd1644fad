package cli

import (
	"flag"
	"strings"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/tunnel"
)

// tunnelFlags are the tunnel's own --tunnel-* flags (tunnel.Flags), wired here for the
// commands that put `wirelab tunnel` in the lab.
type tunnelFlags struct{ f *tunnel.Flags }

// tunnelFlagGiven is the first --tunnel-* flag the user set, "" for none: a command
// refuses it where nothing it runs goes through the tunnel.
func tunnelFlagGiven(fs *flag.FlagSet) string {
	return firstGiven(fs, func(name string) bool { return strings.HasPrefix(name, "tunnel-") })
}

// addTunnelFlags registers the tunnel knobs; compress and wait are the command's defaults
// for --tunnel-compress and --tunnel-group-wait.
func addTunnelFlags(fs *flag.FlagSet, compress string, wait tunnel.GroupWait) *tunnelFlags {
	return &tunnelFlags{tunnel.AddFlags(fs, tunnel.Mode(compress), wait)}
}

// options are the validated knobs as the lab passes them to both ends.
func (t *tunnelFlags) options() (lab.TunnelOptions, error) {
	k, err := t.f.Knobs()
	if err != nil {
		return lab.TunnelOptions{}, err
	}
	return lab.TunnelOptions{Knobs: k}, nil
}
