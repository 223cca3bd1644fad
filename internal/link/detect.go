package link

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/wirelab/wirelab/internal/execx"
)

// Capabilities are the kernel features the shapers need, as found by trying them.
type Capabilities struct {
	Netem   bool `json:"netem"`
	HTB     bool `json:"htb"`
	NFQueue bool `json:"nfqueue"` // iptables can add an NFQUEUE rule
}

// Detect tries each feature in a throwaway namespace (a veth pair: not every kernel has
// dummy), rather than trusting module lists or kernel configs that may lie. The namespace is
// removed before returning, also on error.
func Detect(ctx context.Context, r execx.Runner) (Capabilities, error) {
	var caps Capabilities
	ns := "wld-" + randHex(4) // not "wl-<id>-": `down --all` would take it for a lab
	if _, err := r.Run(ctx, "ip", "netns", "add", ns); err != nil {
		return caps, fmt.Errorf("detect kernel features: create namespace: %w", err)
	}
	defer func() { _, _ = r.Run(context.WithoutCancel(ctx), "ip", "netns", "del", ns) }()
	if _, err := r.Run(ctx, "ip", "-n", ns, "link", "add", "wld0", "type", "veth", "peer", "name", "wld1"); err != nil {
		return caps, fmt.Errorf("detect kernel features: create veth: %w", err)
	}
	try := func(name string, args ...string) bool {
		_, err := inNS(ctx, r, ns, name, args...)
		return err == nil
	}
	caps.Netem = try("tc", "qdisc", "add", "dev", "wld0", "root", "netem", "delay", "1ms")
	if caps.Netem {
		try("tc", "qdisc", "del", "dev", "wld0", "root")
	}
	caps.HTB = try("tc", "qdisc", "add", "dev", "wld0", "root", "handle", "1:", "htb")
	caps.NFQueue = try("iptables", "-t", "mangle", "-A", "FORWARD", "-j", "NFQUEUE", "--queue-num", "0")
	return caps, nil
}

// Named errors of Supports that callers test.
var (
	ErrNoNetem     = errors.New("this kernel has no sch_netem")
	ErrNoDelayLine = errors.New("delay, jitter and loss need sch_netem or iptables with NFQUEUE, and this kernel has neither")
)

// Supports decides whether a kernel with caps can make c with the shaper asked for (auto,
// netem or nfqueue), and returns the delay line it is made with: netem or nfqueue, "" when
// c needs none. Auto takes netem where the kernel has it, else the NFQUEUE delay line. It is
// the one rule: the commands' preflight (`doctor`), the lab's Apply and a real host's
// shaping plan all ask it. Its errors name the flag that asks for what the kernel lacks.
func Supports(caps Capabilities, shaper Shaper, c Condition) (Shaper, error) {
	shaper, err := ParseShaper(string(shaper))
	if err != nil {
		return "", err
	}
	switch {
	case !c.Unlimited() && !caps.HTB:
		return "", errors.New("--rate: this kernel has no HTB qdisc (sch_htb); only --rate unlimited works here")
	case shaper == ShaperNetem && !caps.Netem:
		return "", fmt.Errorf("--shaper netem: %w; use --shaper nfqueue or auto", ErrNoNetem)
	case shaper == ShaperNfqueue && !caps.NFQueue:
		return "", errors.New("--shaper nfqueue: iptables cannot add an NFQUEUE rule on this kernel (xt_NFQUEUE, nfnetlink_queue)")
	case !c.NeedsDelayLine():
		return "", nil
	case !caps.Netem && !caps.NFQueue:
		return "", fmt.Errorf("--delay/--jitter/--loss: %w: load one (modprobe sch_netem, or install iptables with xt_NFQUEUE) or shape rate only", ErrNoDelayLine)
	case shaper == ShaperAuto && caps.Netem:
		return ShaperNetem, nil
	case shaper == ShaperAuto:
		return ShaperNfqueue, nil
	}
	return shaper, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
