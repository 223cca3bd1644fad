package link

import (
	"flag"
	"fmt"
	"slices"

	"github.com/wirelab/wirelab/internal/flagx"
)

// SweepFlags are the wire flags of a command that measures several wires in one run
// (wirelab replay): --rate and --rtt (or --delay) take comma-separated lists, swept as
// every rate × round trip; --jitter, --loss and --shaper take one value, as AddFlags has
// them. Each wire of the sweep is parsed and checked by Flags.Condition, the one place a
// wire flag is read.
type SweepFlags struct {
	rate, delay, rtt, jitter, loss, shaper string
}

// AddSweepFlags registers the sweep's wire flags on fs: one unlimited wire without delay
// by default.
func AddSweepFlags(fs *flag.FlagSet) *SweepFlags {
	s := &SweepFlags{}
	fs.StringVar(&s.rate, "rate", "unlimited", "bandwidth cap per direction, or a comma-separated list of them to sweep, e.g. 20mbit,unlimited: each "+RateForm)
	fs.StringVar(&s.delay, "delay", "", "one-way delay added per direction, or a comma-separated list to sweep, e.g. 0,10ms (RTT = 2×delay); not with --rtt")
	fs.StringVar(&s.rtt, "rtt", "", "round-trip time to add, or a comma-separated list to sweep, e.g. 0,2ms,20ms (default 0); not with --delay")
	fs.StringVar(&s.jitter, "jitter", "0", "± variation of the one-way delay, ≤ every delay swept, e.g. 1ms")
	fs.StringVar(&s.loss, "loss", "0", `random loss per direction in percent, "0.1%" or "0.1"`)
	fs.StringVar(&s.shaper, "shaper", "auto", "how delay/jitter/loss are made: "+ShaperForm)
	return s
}

// Conditions are the wires the flags ask for, rates outermost, each round trip in the
// order given, and the shaper ("" = auto); an error names the flag, the value and the
// accepted form. A value given twice in a list is refused: it would measure the same
// wire twice under two names.
func (s *SweepFlags) Conditions() ([]Condition, Shaper, error) {
	if s.delay != "" && s.rtt != "" {
		return nil, "", fmt.Errorf("%w: --delay and --rtt both given: --rtt is 2×--delay, give one", ErrBadFlag)
	}
	rates, err := sweepList("rate", s.rate, "unlimited")
	if err != nil {
		return nil, "", err
	}
	name, delays := "rtt", s.rtt
	if s.delay != "" {
		name, delays = "delay", s.delay
	}
	ds, err := sweepList(name, delays, "0")
	if err != nil {
		return nil, "", err
	}
	var out []Condition
	var shaper Shaper
	for _, r := range rates {
		for _, d := range ds {
			f := Flags{rate: r, jitter: s.jitter, loss: s.loss, shaper: s.shaper}
			if name == "delay" {
				f.delay = d
			} else {
				f.rtt = d
			}
			c, sh, err := f.Condition()
			if err != nil {
				return nil, "", err
			}
			if slices.Contains(out, c) {
				return nil, "", fmt.Errorf("%w: --rate %s --%s %s: the same wire twice in the sweep; give each value once", ErrBadFlag, s.rate, name, delays)
			}
			out, shaper = append(out, c), sh
		}
	}
	return out, shaper, nil
}

// sweepList splits a swept flag's list; an empty flag is def, a flag of only commas an
// error.
func sweepList(name, v, def string) ([]string, error) {
	if v == "" {
		return []string{def}, nil
	}
	items := flagx.Split(v)
	if len(items) == 0 {
		return nil, fmt.Errorf("%w: --%s %q: want a value or a comma-separated list, e.g. 0,2ms,20ms", ErrBadFlag, name, v)
	}
	return items, nil
}
