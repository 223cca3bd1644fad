package link

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/flagx"
)

// Limits of a condition; beyond them the value is a typo, not an experiment.
const (
	MaxDelay = 10 * time.Second // one way
)

// ErrBadFlag is returned for a link flag that does not parse or is out of range.
var ErrBadFlag = errors.New("bad link flag")

// Validate checks c's ranges: rate ≥ 0, 0 ≤ delay ≤ 10 s, 0 ≤ jitter ≤ delay (jitter is ±
// around the delay and a packet cannot leave before it arrived), 0 ≤ loss ≤ 100.
func (c Condition) Validate() error {
	switch {
	case c.RateBps < 0:
		return fmt.Errorf("%w: --rate %d: must not be negative; want %s", ErrBadFlag, c.RateBps, RateForm)
	case c.Delay < 0 || c.Delay > MaxDelay:
		return fmt.Errorf("%w: --delay %s: want a one-way duration from 0 to %s, e.g. 20ms", ErrBadFlag, c.Delay, MaxDelay)
	case c.Jitter < 0:
		return fmt.Errorf("%w: --jitter %s: must not be negative; want a duration like 1ms", ErrBadFlag, c.Jitter)
	case c.Jitter > c.Delay:
		return fmt.Errorf("%w: --jitter %s is larger than the one-way delay %s: jitter is ± around the delay; want jitter ≤ delay", ErrBadFlag, c.Jitter, c.Delay)
	case c.LossPct < 0 || c.LossPct > 100:
		return fmt.Errorf("%w: --loss %g%%: want a percentage from 0 to 100, e.g. 0.1%%", ErrBadFlag, c.LossPct)
	}
	return nil
}

// Flags are the link flags shared by every command that sets a wire (up, run, study, link
// set): --rate, --delay or --rtt, --jitter, --loss, --shaper.
type Flags struct {
	rate, delay, rtt, jitter, loss, shaper string
	defaultRTT                             string
}

// Defaults are a command's own defaults for the link flags: a rate, and a round trip used
// when neither --delay nor --rtt is given.
type Defaults struct {
	Rate, RTT string
}

// AddFlags registers the link flags on fs: an unlimited wire without delay by default.
func AddFlags(fs *flag.FlagSet) *Flags { return AddFlagsWith(fs, Defaults{}) }

// AddFlagsWith registers the link flags on fs with a command's own defaults.
func AddFlagsWith(fs *flag.FlagSet, d Defaults) *Flags {
	f := &Flags{defaultRTT: d.RTT}
	if d.Rate == "" {
		d.Rate = "unlimited"
	}
	rttHelp := "round-trip time to add, e.g. 40ms (= --delay 20ms); not with --delay"
	if d.RTT != "" {
		rttHelp += " (default " + d.RTT + " when neither is given)"
	}
	fs.StringVar(&f.rate, "rate", d.Rate, "bandwidth cap per direction: "+RateForm)
	fs.StringVar(&f.delay, "delay", "", "one-way delay added per direction, e.g. 20ms (RTT = 2×delay); not with --rtt")
	fs.StringVar(&f.rtt, "rtt", "", rttHelp)
	fs.StringVar(&f.jitter, "jitter", "0", "± variation of the one-way delay, ≤ delay, e.g. 1ms")
	fs.StringVar(&f.loss, "loss", "0", `random loss per direction in percent, "0.1%" or "0.1"`)
	fs.StringVar(&f.shaper, "shaper", "auto", "how delay/jitter/loss are made: "+ShaperForm)
	return f
}

// Condition returns the condition and the shaper ("" = auto) the flags ask for, or an error
// naming the flag and the accepted form.
func (f *Flags) Condition() (Condition, Shaper, error) {
	var c Condition
	rate, err := ParseRate(f.rate)
	if err != nil {
		return c, "", fmt.Errorf("--rate: %w", err)
	}
	c.RateBps = rate
	if f.delay != "" && f.rtt != "" {
		return c, "", fmt.Errorf("%w: --delay and --rtt both given: --rtt is 2×--delay, give one", ErrBadFlag)
	}
	rtt := f.rtt
	if f.delay == "" && rtt == "" {
		rtt = f.defaultRTT
	}
	if f.delay != "" {
		if c.Delay, err = parseDur("delay", f.delay); err != nil {
			return c, "", err
		}
	}
	if rtt != "" {
		d, err := parseDur("rtt", rtt)
		if err != nil {
			return c, "", err
		}
		c.Delay = OneWay(d)
	}
	if c.Jitter, err = parseDur("jitter", f.jitter); err != nil {
		return c, "", err
	}
	if c.LossPct, err = ParseLoss(f.loss); err != nil {
		return c, "", err
	}
	shaper, err := ParseShaper(f.shaper)
	if err != nil {
		return c, "", err
	}
	if err := c.Validate(); err != nil {
		return c, "", err
	}
	return c, shaper, nil
}

func parseDur(name, s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%w: --%s %q: want a duration with a unit, e.g. 20ms or 1.5ms", ErrBadFlag, name, s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%w: --%s %q: must not be negative", ErrBadFlag, name, s)
	}
	if d > 2*MaxDelay {
		return 0, fmt.Errorf("%w: --%s %q: more than %s is not a network", ErrBadFlag, name, s, 2*MaxDelay)
	}
	return d, nil
}

// ParseLoss parses a loss percentage: "0.1%" and "0.1" both mean 0.1 percent (tcconfig's
// convention), never a fraction.
func ParseLoss(s string) (float64, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v != v {
		return 0, fmt.Errorf("%w: --loss %q: want a percentage from 0 to 100, e.g. 0.1%%", ErrBadFlag, s)
	}
	if v < 0 || v > 100 {
		return 0, fmt.Errorf("%w: --loss %q: want a percentage from 0 to 100, e.g. 0.1%%", ErrBadFlag, s)
	}
	return v, nil
}

// ParseDuration parses the duration flag --name as the link flags do: a Go duration with
// a unit ("0.15ms", "40ms") or "0", at most 20 s.
func ParseDuration(name, s string) (time.Duration, error) { return parseDur(name, s) }

// ParseRTTs parses a comma-separated list of round-trip times for flag --name ("0,20ms,
// 100ms"), each as ParseDuration takes it; an empty list is nil.
func ParseRTTs(name, s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, f := range flagx.Split(s) {
		d, err := parseDur(strings.TrimPrefix(name, "--"), f)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}
