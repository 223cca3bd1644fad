package link

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wirelab/wirelab/internal/execx"
)

// Wire is the wire host as the shapers see it.
type Wire struct {
	NS       string   // wire namespace name
	Ifaces   []string // egress interfaces in NS to shape (one per attached host)
	StateDir string   // dir for delayer pid/log/stats files (exists)
	Self     string   // path of the wirelab binary (the delayer runs as `Self __delayer ...` inside NS)
}

// Applied is what a shaper did: its name as results record it ("htb", "htb+netem",
// "nfqueue", ...), the kernel's view read back after applying, and the delayer's pid if one
// was started.
type Applied struct {
	Shaper     string `json:"shaper"`
	ReadBack   string `json:"read_back"`
	DelayerPid int    `json:"delayer_pid,omitempty"`
}

// Shaper is one way of putting a Condition on a wire.
//
// Setup assumes the wire carries no shaping (Apply clears it first) and returns what it did.
// Teardown removes everything any Setup of this shaper could have made. It ignores what is
// missing, so it is safe on a half-built wire, on a wire another shaper set up, on a wire whose
// namespace is gone, and when run twice.
type Shaper interface {
	Name() string
	Setup(ctx context.Context, r execx.Runner, w Wire, c Condition) (Applied, error)
	Teardown(ctx context.Context, r execx.Runner, w Wire) error
}

// shapers is the explicit registry; teardownOrder is the order Clear undoes them in (user-space
// delayer first, so no packet is queued to a queue nobody reads; qdiscs last).
var (
	shapers = map[string]Shaper{
		"htb":     htbShaper{},
		"netem":   netemShaper{},
		"nfqueue": nfqShaper{proc: "/proc"},
	}
	teardownOrder = []string{"nfqueue", "netem", "htb"}
)

// Shaper choices a user may ask for; "" (or "auto") picks netem when the kernel has it.
const (
	ShaperAuto    = ""
	ShaperNetem   = "netem"
	ShaperNfqueue = "nfqueue"
)

// ShaperForm is the accepted form of --shaper, for errors and --help.
const ShaperForm = "auto, netem or nfqueue"

// Named errors callers test.
var (
	ErrBadShaper = errors.New("bad shaper")
	ErrNoNetem   = errors.New("this kernel has no sch_netem")
)

// Apply replaces any shaping of w by c. shaper is "" (auto), "netem" or "nfqueue". Rate alone
// needs only HTB; delay, jitter or loss need netem or the NFQUEUE delayer. Everything that
// can be refused (bad condition, netem asked on a kernel without it) is refused before the
// wire changes. If setting up fails half-way the wire is cleared, not left half-shaped.
func Apply(ctx context.Context, r execx.Runner, w Wire, c Condition, shaper string) (Applied, error) {
	if err := c.Validate(); err != nil {
		return Applied{}, err
	}
	name, err := choose(ctx, r, c, shaper)
	if err != nil {
		return Applied{}, err
	}
	if err := Clear(ctx, r, w); err != nil {
		return Applied{}, fmt.Errorf("apply link %s: clear previous shaping: %w", c, err)
	}
	a, err := shapers[name].Setup(ctx, r, w, c)
	if err != nil {
		return Applied{}, errors.Join(fmt.Errorf("apply link %s with %s: %w", c, name, err), Clear(ctx, r, w))
	}
	return a, nil
}

func choose(ctx context.Context, r execx.Runner, c Condition, shaper string) (string, error) {
	switch shaper {
	case ShaperAuto, "auto":
		if !c.NeedsDelayLine() {
			return "htb", nil
		}
		caps, err := Detect(ctx, r)
		if err != nil {
			return "", err
		}
		if caps.Netem {
			return "netem", nil
		}
		return "nfqueue", nil
	case ShaperNetem:
		caps, err := Detect(ctx, r)
		if err != nil {
			return "", err
		}
		if !caps.Netem {
			return "", fmt.Errorf("--shaper netem: %w; use --shaper nfqueue or auto", ErrNoNetem)
		}
		if !c.NeedsDelayLine() {
			return "htb", nil
		}
		return "netem", nil
	case ShaperNfqueue:
		if !c.NeedsDelayLine() {
			return "htb", nil
		}
		return "nfqueue", nil
	}
	return "", fmt.Errorf("--shaper %q: %w: want %s", shaper, ErrBadShaper, ShaperForm)
}

// Clear removes all shaping from w, whatever shaper made it. It is idempotent and works on a
// half-built wire; it tries every step and reports all failures together.
func Clear(ctx context.Context, r execx.Runner, w Wire) error {
	var errs []error
	for _, n := range teardownOrder {
		if err := shapers[n].Teardown(ctx, r, w); err != nil {
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
