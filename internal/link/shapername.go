package link

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Shaper names how a wire's condition is made: as the user asks for it (--shaper: auto,
// netem or nfqueue) and as results record what was done ("none", "htb", "netem",
// "nfqueue", or the rate limiter with its delay line, "htb+netem", "htb+nfqueue"). It
// marshals to that text, so results.json and the lab's state keep their strings.
type Shaper string

// Shapers and their parts.
const (
	ShaperAuto    Shaper = ""        // asked: netem where the kernel has it, else nfqueue
	ShaperNone    Shaper = "none"    // made: nothing shaped
	ShaperHTB     Shaper = "htb"     // the rate limiter
	ShaperNetem   Shaper = "netem"   // the kernel's delay line
	ShaperNfqueue Shaper = "nfqueue" // wirelab's delay line, fed through NFQUEUE
)

// ShaperForm is the accepted form of --shaper, for errors and --help.
const ShaperForm = "auto, netem or nfqueue"

// ErrBadShaper is returned for a --shaper that is not one of ShaperForm.
var ErrBadShaper = errors.New("bad shaper")

// ParseShaper reads --shaper: "auto" (or nothing), "netem" or "nfqueue", in any case.
func ParseShaper(s string) (Shaper, error) {
	switch t := Shaper(strings.ToLower(strings.TrimSpace(s))); t {
	case "auto", ShaperAuto:
		return ShaperAuto, nil
	case ShaperNetem, ShaperNfqueue:
		return t, nil
	}
	return "", fmt.Errorf("%w: --shaper %q: want %s", ErrBadShaper, s, ShaperForm)
}

// Made is the name of what makes a condition: the rate limiter when rate is capped (or
// counted, on a real host), and the delay line line (netem, nfqueue, or "" for none).
func Made(rate bool, line Shaper) Shaper {
	switch {
	case rate && line != "":
		return ShaperHTB + "+" + line
	case rate:
		return ShaperHTB
	case line != "":
		return line
	}
	return ShaperNone
}

// Uses reports whether s makes use of part. s is one shaper's name ("htb+nfqueue") or a
// run's list of its hosts' ("c1: htb+netem, c2: htb+nfqueue") as results.json records it.
func (s Shaper) Uses(part Shaper) bool {
	return slices.Contains(strings.FieldsFunc(string(s), func(r rune) bool {
		return r == '+' || r == ',' || r == ':' || r == ' '
	}), string(part))
}

// DelayLine is what makes delay, jitter and loss in s: ShaperNetem, ShaperNfqueue, or ""
// when s makes none.
func (s Shaper) DelayLine() Shaper {
	for _, l := range []Shaper{ShaperNetem, ShaperNfqueue} {
		if s.Uses(l) {
			return l
		}
	}
	return ""
}
