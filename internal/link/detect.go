package link

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
