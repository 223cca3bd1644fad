package replication

import (
	"fmt"
	"strings"
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
