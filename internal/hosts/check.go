package hosts

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrNoNIC is returned when the NIC to shape does not exist on its host; ErrNICBusy when it
// carries shaping that wirelab did not make.
var (
	ErrNoNIC   = errors.New("no such NIC")
	ErrNICBusy = errors.New("NIC already has shaping of its own")
)

// defaultRoots are the root qdiscs a NIC has when nobody configured it (the kernel's
// default_qdisc choices and the multiqueue root): wirelab may replace and later delete
// them, which puts the default back.
var defaultRoots = map[string]bool{"mq": true, "fq_codel": true, "pfifo_fast": true,
	"noqueue": true, "fq": true, "pfifo": true, "": true}

// CheckNIC makes sure nic exists on h and carries no shaping except wirelab's own (an HTB
// root with wirelab's IFB device present, left by a wirelab that was killed), so shaping it
// and removing that again destroys nobody's configuration. It changes nothing.
func CheckNIC(ctx context.Context, h Host, nic string) error {
	if _, err := h.Run(ctx, "ip", "link", "show", "dev", nic); err != nil {
		names := ""
		if out, lerr := h.Run(ctx, "ls", "/sys/class/net"); lerr == nil {
			names = strings.Join(strings.Fields(string(out)), ", ")
		}
		return fmt.Errorf("host %s: NIC %q: %w: set nic in the inventory to one of: %s", h.Name(), nic, ErrNoNIC, names)
	}
	out, err := h.Run(ctx, "tc", "qdisc", "show", "dev", nic)
	if err != nil {
		return fmt.Errorf("host %s: read the qdiscs of %s: %w", h.Name(), nic, err)
	}
	root, ingress := qdiscState(string(out))
	if defaultRoots[root] && !ingress {
		return nil
	}
	if root == "htb" || defaultRoots[root] {
		if _, err := h.Run(ctx, "ip", "link", "show", "dev", IFBName(nic)); err == nil {
			return nil // wirelab's own, from an earlier run: Shape replaces it
		}
	}
	what := "root qdisc " + root
	if ingress {
		what += " and an ingress qdisc"
	}
	return fmt.Errorf("host %s: %s has %s: %w: wirelab would replace it and, when done, delete it; remove it yourself (tc qdisc del dev %s root; tc qdisc del dev %s ingress) or shape another NIC",
		h.Name(), nic, what, ErrNICBusy, nic, nic)
}

// qdiscState reads `tc qdisc show dev X`: the kind of the root qdisc and whether an ingress
// (or clsact) qdisc is attached.
func qdiscState(out string) (root string, ingress bool) {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "qdisc" {
			continue
		}
		switch {
		case f[1] == "ingress" || f[1] == "clsact":
			ingress = true
		case len(f) > 3 && f[3] == "root":
			root = f[1]
		}
	}
	return root, ingress
}

// DetectNetem reports whether h's kernel has sch_netem, by trying it on a throwaway IFB
// device (never on a real NIC), which is removed again.
func DetectNetem(ctx context.Context, h Host) (bool, error) {
	dev := "wlprobe0"
	_, _ = h.Run(ctx, "ip", "link", "del", dev)
	if _, err := h.Run(ctx, "ip", "link", "add", dev, "type", "ifb"); err != nil {
		return false, fmt.Errorf("host %s: detect netem: %w: does the kernel have ifb (needed for the return direction)?", h.Name(), err)
	}
	defer func() { _, _ = h.Run(context.WithoutCancel(ctx), "ip", "link", "del", dev) }()
	_, err := h.Run(ctx, "tc", "qdisc", "add", "dev", dev, "root", "netem", "delay", "1ms")
	return err == nil, nil
}

// DetectNFQueue reports whether h's iptables (ip6tables for ipv6) can send packets to an
// NFQUEUE, by adding such a rule to a chain of its own that no hook jumps to, so no packet
// ever meets it, and removing the chain again. No iptables is a no.
func DetectNFQueue(ctx context.Context, h Host, ipv6 bool) bool {
	cmd, chain := "iptables", "WIRELAB-PROBE"
	if ipv6 {
		cmd = "ip6tables"
	}
	drop := func() {
		for _, op := range []string{"-F", "-X"} {
			_, _ = h.Run(context.WithoutCancel(ctx), cmd, "-t", "mangle", op, chain)
		}
	}
	drop()
	if _, err := h.Run(ctx, cmd, "-t", "mangle", "-N", chain); err != nil {
		return false
	}
	defer drop()
	_, err := h.Run(ctx, cmd, "-t", "mangle", "-A", chain, "-j", "NFQUEUE", "--queue-num", "0")
	return err == nil
}
