package replaystudy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/flagx"
)

// Series is how one series' connections cross the wire: MySQL protocol compression,
// TLS, wirelab's tunnel, or none of them (plain).
type Series struct {
	Compression, TLS, Tunnel bool
}

// The words of a series' name; combined with "+", in this order.
const (
	seriesPlain       = "plain"
	seriesCompression = "compression"
	seriesTLS         = "tls"
	seriesTunnel      = "tunnel"
)

// SeriesForm is --series' accepted form, for errors and --help.
const SeriesForm = "a comma-separated list of plain, compression, tls, tunnel, or their combinations joined by + (e.g. tls+compression)"

// Name is the series as results.json's "series" and --series spell it: "plain",
// "compression", "tls+compression", "tunnel".
func (s Series) Name() string {
	var parts []string
	if s.Compression {
		parts = append(parts, seriesCompression)
	}
	if s.TLS {
		parts = append(parts, seriesTLS)
	}
	if s.Tunnel {
		parts = append(parts, seriesTunnel)
	}
	if len(parts) == 0 {
		return seriesPlain
	}
	return strings.Join(parts, "+")
}

// ParseSeries reads --series. Each item is one series; a series named twice (in any
// order of its words) is refused, as is plain combined with anything.
func ParseSeries(v string) ([]Series, error) {
	items := flagx.Split(v)
	if len(items) == 0 {
		return nil, fmt.Errorf("--series %q: want %s", v, SeriesForm)
	}
	var out []Series
	for _, item := range items {
		s, err := parseOne(item)
		if err != nil {
			return nil, fmt.Errorf("--series %q: %w", v, err)
		}
		if slices.Contains(out, s) {
			return nil, fmt.Errorf("--series %q: %s is named twice", v, s.Name())
		}
		out = append(out, s)
	}
	return out, nil
}

// parseOne reads one series: its words joined by +.
func parseOne(item string) (Series, error) {
	var s Series
	words := strings.Split(item, "+")
	for _, w := range words {
		switch strings.TrimSpace(w) {
		case seriesPlain:
			if len(words) > 1 {
				return s, fmt.Errorf("%q: plain is the series with none of compression, tls, tunnel; it combines with nothing", item)
			}
		case seriesCompression:
			s.Compression = true
		case seriesTLS:
			s.TLS = true
		case seriesTunnel:
			s.Tunnel = true
		default:
			return s, fmt.Errorf("%q: unknown word %q; want %s", item, w, SeriesForm)
		}
	}
	return s, nil
}

// check refuses a series the engine cannot run: protocol compression on PostgreSQL.
func (s Series) check(k engine.Kind) error {
	if s.Compression {
		if err := k.RefuseCompression("--series " + s.Name()); err != nil {
			return err
		}
	}
	return nil
}
