package link

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/procfs"
)

// Wire is the wire host as the shapers see it.
type Wire struct {
	NS       string    // wire namespace name
	Ifaces   []string  // egress interfaces in NS to shape (one per attached host)
	StateDir string    // dir for delayer pid/log/stats files (exists)
	Self     string    // path of the wirelab binary (the delayer runs as `Self __delayer ...` inside NS)
	Proc     procfs.FS // this machine's /proc, where a delayer is recognised by its command line
}

// Applied is what a shaper did: its name as results record it ("htb", "htb+netem",
// "nfqueue", ...), the kernel's view read back after applying, and the delayer's pid if one
// was started.
type Applied struct {
	Shaper     Shaper `json:"shaper"`
	ReadBack   string `json:"read_back"`
	DelayerPid int    `json:"delayer_pid,omitempty"`
}

// maker is one way of putting a Condition on a wire.
//
// Setup assumes the wire carries no shaping (Apply clears it first) and returns what it did.
// Teardown removes everything any Setup of this maker could have made. It ignores what is
// missing, so it is safe on a half-built wire, on a wire another maker set up, on a wire whose
// namespace is gone, and when run twice.
type maker interface {
	Setup(ctx context.Context, r execx.Runner, w Wire, c Condition) (Applied, error)
	Teardown(ctx context.Context, r execx.Runner, w Wire) error
}

// makers is the explicit registry, by the part of a shaper each makes (the rate limiter
// alone, or a delay line with the rate limiter under it); teardownOrder is the order Clear
// undoes them in (user-space delayer first, so no packet is queued to a queue nobody reads;
// qdiscs last).
var (
	makers = map[Shaper]maker{
		ShaperHTB:     htbShaper{},
		ShaperNetem:   netemShaper{},
		ShaperNfqueue: nfqShaper{},
	}
	teardownOrder = []Shaper{ShaperNfqueue, ShaperNetem, ShaperHTB}
)

// Apply replaces any shaping of w by c. shaper is auto, netem or nfqueue. Rate alone needs
// only HTB; delay, jitter or loss need netem or the NFQUEUE delayer (Supports decides).
// Everything that can be refused (bad condition, netem asked on a kernel without it) is
// refused before the wire changes. If setting up fails half-way the wire is cleared, not
// left half-shaped.
func Apply(ctx context.Context, r execx.Runner, w Wire, c Condition, shaper Shaper) (Applied, error) {
	if err := c.Validate(); err != nil {
		return Applied{}, err
	}
	line, err := choose(ctx, r, c, shaper)
	if err != nil {
		return Applied{}, err
	}
	if err := Clear(ctx, r, w); err != nil {
		return Applied{}, fmt.Errorf("apply link %s: clear previous shaping: %w", c, err)
	}
	name := cmp.Or(line, ShaperHTB)
	a, err := makers[name].Setup(ctx, r, w, c)
	if err != nil {
		return Applied{}, errors.Join(fmt.Errorf("apply link %s with %s: %w", c, name, err), Clear(ctx, r, w))
	}
	return a, nil
}

// choose is the delay line Apply makes c with ("" for none). The kernel is asked (Detect,
// a throwaway namespace) only when its answer changes what is made: a delay line to pick,
// or netem asked for. The NFQUEUE delay line asked for is not asked about again: the
// command's preflight has checked it (Supports) before the lab was made.
func choose(ctx context.Context, r execx.Runner, c Condition, shaper Shaper) (Shaper, error) {
	shaper, err := ParseShaper(string(shaper))
	if err != nil {
		return "", err
	}
	if shaper == ShaperNetem || shaper == ShaperAuto && c.NeedsDelayLine() {
		caps, err := Detect(ctx, r)
		if err != nil {
			return "", err
		}
		return Supports(caps, shaper, c)
	}
	if c.NeedsDelayLine() {
		return ShaperNfqueue, nil
	}
	return "", nil
}

// Clear removes all shaping from w, whatever shaper made it. It is idempotent and works on a
// half-built wire; it tries every step and reports all failures together.
func Clear(ctx context.Context, r execx.Runner, w Wire) error {
	var errs []error
	for _, n := range teardownOrder {
		if err := makers[n].Teardown(ctx, r, w); err != nil {
			errs = append(errs, fmt.Errorf("clear %s on %s: %w", n, w.NS, err))
		}
	}
	return errors.Join(errs...)
}

// inNS runs a command inside the wire namespace.
func inNS(ctx context.Context, r execx.Runner, ns, name string, args ...string) ([]byte, error) {
	n, a := execx.InNetns(ns, name, args...)
	return r.Run(ctx, n, a...)
}

// missing reports whether err only says the thing to remove is not there (already removed,
// never made, or the namespace or device is gone): teardown treats that as done.
func missing(err error) bool {
	if err == nil {
		return true
	}
	s := err.Error()
	for _, m := range []string{
		"Cannot delete qdisc with handle of zero", "No such file or directory",
		"Cannot find device", "No chain/target/match by that name", "does not exist",
		"Bad rule (does a matching rule exist", "Invalid handle", "Cannot open network namespace",
	} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// delRoot removes the root qdisc of every interface: HTB, netem and their children go with it.
func delRoot(ctx context.Context, r execx.Runner, w Wire) error {
	var errs []error
	for _, ifc := range w.Ifaces {
		if _, err := inNS(ctx, r, w.NS, "tc", "qdisc", "del", "dev", ifc, "root"); !missing(err) {
			errs = append(errs, fmt.Errorf("remove root qdisc of %s: %w", ifc, err))
		}
	}
	return errors.Join(errs...)
}

// readBackTC renders the qdiscs and classes of every interface as the kernel reports them.
func readBackTC(ctx context.Context, r execx.Runner, w Wire) (string, error) {
	var b strings.Builder
	for _, ifc := range w.Ifaces {
		for _, what := range []string{"qdisc", "class"} {
			out, err := inNS(ctx, r, w.NS, "tc", what, "show", "dev", ifc)
			if err != nil {
				return "", fmt.Errorf("read back tc %s of %s: %w", what, ifc, err)
			}
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if l = strings.TrimSpace(l); l != "" {
					fmt.Fprintf(&b, "%s: %s\n", ifc, l)
				}
			}
		}
	}
	return strings.TrimSpace(b.String()), nil
}
