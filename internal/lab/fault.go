package lab

import (
	"context"
	"fmt"
)

// faultComment tags the rules DropWire inserts, so only they are removed.
const faultComment = "wirelab-replication-fault"

// dropRules are the iptables rules (FORWARD chain of the wire host) that drop every
// packet to and from one host: loss 100% on that host's link, without touching the
// link's qdiscs, the delayer or the interface state.
func dropRules(wireIface string) [][]string {
	var out [][]string
	for _, dir := range []string{"-i", "-o"} {
		out = append(out, []string{dir, wireIface, "-m", "comment", "--comment", faultComment, "-j", "DROP"})
	}
	return out
}

// DropWire makes the wire drop everything to and from host until the returned restore is
// called (replication's fault scenario). restore is idempotent and uses its own context,
// so a cancelled run still restores the link (and Down removes the wire host's
// namespace, rules included, anyway).
func (l *Lab) DropWire(ctx context.Context, host string) (restore func() error, err error) {
	wif := l.State.WireIfaces[host]
	if wif == "" {
		return nil, fmt.Errorf("drop wire: lab has no link to %q", host)
	}
	var added [][]string
	restore = func() error {
		var first error
		for i := len(added) - 1; i >= 0; i-- {
			argv := append([]string{"iptables", "-w", "-D", "FORWARD"}, added[i]...)
			if _, err := l.Exec(context.WithoutCancel(ctx), Wire, argv...); err != nil && first == nil {
				first = fmt.Errorf("restore wire to %s: %w", host, err)
			}
		}
		added = nil
		return first
	}
	for _, r := range dropRules(wif) {
		argv := append([]string{"iptables", "-w", "-I", "FORWARD", "1"}, r...)
		if _, err := l.Exec(ctx, Wire, argv...); err != nil {
			rerr := restore()
			if rerr != nil {
				return nil, fmt.Errorf("drop wire to %s: %w (and %v)", host, err, rerr)
			}
			return nil, fmt.Errorf("drop wire to %s: %w", host, err)
		}
		added = append(added, r)
	}
	return restore, nil
}
