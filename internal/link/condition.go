package link

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Condition is what the wire does to packets, per direction. Delay is one-way (netem's
// convention): a round trip pays it twice. RateBps 0 means unlimited.
type Condition struct {
	RateBps int64         `json:"rate_bps"`
	Delay   time.Duration `json:"delay_ns"`
	Jitter  time.Duration `json:"jitter_ns"`
	LossPct float64       `json:"loss_pct"`
}

// Unlimited reports whether the condition leaves bandwidth uncapped.
func (c Condition) Unlimited() bool { return c.RateBps == 0 }

// NeedsDelayLine reports whether c needs more than a rate limiter: delay, jitter or loss,
// which netem or the NFQUEUE delayer make. The one place that decides it.
func (c Condition) NeedsDelayLine() bool { return c.Delay > 0 || c.Jitter > 0 || c.LossPct > 0 }

// Shaped reports whether c changes the wire at all (a rate cap or a delay line).
func (c Condition) Shaped() bool { return !c.Unlimited() || c.NeedsDelayLine() }

// RTT is the round trip the condition adds.
func (c Condition) RTT() time.Duration { return RTT(c.Delay) }

// AtRTT is c with the one-way delay that makes a round trip of rtt, its jitter held to
// that delay (jitter is ± around the delay: a matrix of RTTs that starts at 0 keeps the
// rest of its wire).
func (c Condition) AtRTT(rtt time.Duration) Condition {
	c.Delay = OneWay(rtt)
	c.Jitter = min(c.Jitter, c.Delay)
	return c
}

// RTT is the round trip a one-way delay makes: a round trip pays it twice. With OneWay, the
// one place the two are converted.
func RTT(oneWay time.Duration) time.Duration { return 2 * oneWay }

// OneWay is the one-way delay that makes a round trip of rtt.
func OneWay(rtt time.Duration) time.Duration { return rtt / 2 }

// RTTMs is RTT in the milliseconds results.json records a point's delay in
// (link_delay_ms, one way).
func RTTMs(delayMs float64) float64 { return 2 * delayMs }

// String renders the condition the way tcconfig users write it.
func (c Condition) String() string {
	parts := []string{"rate " + FormatRate(c.RateBps)}
	if c.Delay > 0 {
		parts = append(parts, "delay "+c.Delay.String())
	}
	if c.Jitter > 0 {
		parts = append(parts, "jitter "+c.Jitter.String())
	}
	if c.LossPct > 0 {
		parts = append(parts, "loss "+strconv.FormatFloat(c.LossPct, 'g', -1, 64)+"%")
	}
	return strings.Join(parts, ", ")
}

// ErrBadRate is returned for a rate that is not a positive tc rate or "unlimited".
var ErrBadRate = errors.New("bad rate")

// rateUnits are tc's units (tc(8) "RATES"): bit-based and byte-based, SI and IEC.
var rateUnits = map[string]float64{
	"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12,
	"kibit": 1 << 10, "mibit": 1 << 20, "gibit": 1 << 30, "tibit": 1 << 40,
	"bps": 8, "kbps": 8e3, "mbps": 8e6, "gbps": 8e9, "tbps": 8e12,
	"kibps": 8 << 10, "mibps": 8 << 20, "gibps": 8 << 30, "tibps": 8 << 40,
}

// RateForm is the accepted form of a rate, for error messages and --help.
const RateForm = `a number with a tc unit (bit, kbit, mbit, gbit, bps, kbps, mbps, gbps, kibit, mibit, ...), e.g. 20mbit, or "unlimited"`

// ParseRate parses a tc-style rate ("20mbit", "1gbit", "500kbps") into bits per second.
// "unlimited" returns 0; zero or negative rates are rejected.
func ParseRate(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "unlimited" || t == "none" {
		return 0, nil
	}
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], t[i:]
	if num == "" {
		return 0, fmt.Errorf("%w %q: want %s", ErrBadRate, s, RateForm)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("%w %q: want %s", ErrBadRate, s, RateForm)
	}
	mult, ok := rateUnits[unit]
	if !ok {
		return 0, fmt.Errorf("%w %q: unknown unit %q; want %s", ErrBadRate, s, unit, RateForm)
	}
	bps := v * mult
	if bps < 1 || math.IsInf(bps, 0) || bps > 1e13 {
		return 0, fmt.Errorf("%w %q: must be between 1bit and 10tbit; want %s", ErrBadRate, s, RateForm)
	}
	return int64(math.Round(bps)), nil
}

// FormatRate renders bits per second in tc's SI bit units: 20mbit, 1.5mbit, 1gbit,
// "unlimited" for 0. ParseRate reads back what it writes.
func FormatRate(bps int64) string {
	if bps == 0 {
		return "unlimited"
	}
	for _, u := range []struct {
		div  int64
		name string
	}{{1_000_000_000, "gbit"}, {1_000_000, "mbit"}, {1_000, "kbit"}} {
		if bps >= u.div {
			if bps%u.div == 0 {
				return strconv.FormatInt(bps/u.div, 10) + u.name
			}
			return strconv.FormatFloat(float64(bps)/float64(u.div), 'f', -1, 64) + u.name
		}
	}
	return strconv.FormatInt(bps, 10) + "bit"
}
