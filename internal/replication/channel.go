package replication

import (
	"fmt"
	"strings"

	"github.com/wirelab/wirelab/internal/engine"
)

// Channel is how the replica's IO thread reaches the source.
type Channel string

// The channels the study compares.
const (
	// Native: the replica connects to the source across the wire.
	Native Channel = "native"
	// NativeCompressed: the same with slave_compressed_protocol=ON (zlib per packet).
	NativeCompressed Channel = "native-compressed"
	// Tunnel: the replica connects to a local `wirelab tunnel entry`; the exit sits next
	// to the source and the WAN leg between them is grouped, zstd-compressed and TLS.
	Tunnel Channel = "tunnel"
)

// Channels is every channel, in the report's order.
var Channels = []Channel{Native, NativeCompressed, Tunnel}

// ParseChannels parses --channels: a comma-separated subset of Channels, no repeats.
func ParseChannels(s string) ([]Channel, error) {
	var names []string
	for _, c := range Channels {
		names = append(names, string(c))
	}
	form := "a comma-separated subset of " + strings.Join(names, ",")
	seen := map[Channel]bool{}
	var out []Channel
	for _, f := range strings.Split(s, ",") {
		c := Channel(strings.TrimSpace(f))
		if c == "" {
			continue
		}
		known := false
		for _, k := range Channels {
			known = known || k == c
		}
		if !known {
			return nil, fmt.Errorf("--channels %q: unknown channel %q; want %s", s, c, form)
		}
		if seen[c] {
			return nil, fmt.Errorf("--channels %q: %s appears twice; want %s", s, c, form)
		}
		seen[c] = true
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--channels is empty: want %s", form)
	}
	// Measure in the canonical order whatever the user typed: native first, so every
	// other channel's ratio has its reference.
	var ordered []Channel
	for _, c := range Channels {
		if seen[c] {
			ordered = append(ordered, c)
		}
	}
	return ordered, nil
}

// ChannelsFor is every channel engine k has, in the report's order. PostgreSQL has no
// native-compressed: its replication protocol has no compression, so the tunnel is its
// compressed channel.
func ChannelsFor(k engine.Kind) []Channel {
	var out []Channel
	for _, c := range Channels {
		if c != NativeCompressed || k.HasCompression() {
			out = append(out, c)
		}
	}
	return out
}

// CheckChannels refuses a channel engine k does not have, naming --channels and why.
func CheckChannels(k engine.Kind, chans []Channel) error {
	for _, c := range chans {
		if c == NativeCompressed && !k.HasCompression() {
			return fmt.Errorf("--channels: %s does not exist on %s: its replication protocol has no compression "+
				"(the tunnel channel is the compressed one); use --channels native,tunnel", c, k.Title())
		}
	}
	return nil
}
