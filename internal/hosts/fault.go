package hosts

import "strconv"

// FaultChain is the filter-table chain a wire fault puts on a shaped host: every packet
// between the host and its peer is dropped there, but the kept (SSH) ports', so wirelab's
// control connections and its SQL through them carry on while the study's flows see a
// dead link.
const FaultChain = "WIRELAB-FAULT"

// faultHooks are the built-in chains that jump to FaultChain: the host's own traffic to
// and from the peer (nothing it forwards).
var faultHooks = []string{"OUTPUT", "INPUT"}

// PlanDrop is the commands that make t's host drop everything to and from t.Peer except
// the kept ports: the chain and its rules first, the jumps last, so no packet meets a
// half-built chain. UndoDrop removes it; UndoShape (so RemoteLink.Clear, the dead-man
// switch's undo file and `down --hosts`) removes it too, so a dropped wire never outlives
// wirelab.
func PlanDrop(t ShapeTarget) [][]string {
	cmd := iptablesFor(t.Peer.Is6())
	c := func(args ...string) []string { return append([]string{cmd, "-w"}, args...) }
	out := [][]string{c("-N", FaultChain)}
	for _, port := range t.KeepPorts {
		for _, dir := range []string{"--dport", "--sport"} {
			out = append(out, c("-A", FaultChain, "-p", "tcp", dir, strconv.Itoa(int(port)), "-j", "RETURN"))
		}
	}
	out = append(out, c("-A", FaultChain, "-d", t.Peer.String(), "-j", "DROP"),
		c("-A", FaultChain, "-s", t.Peer.String(), "-j", "DROP"))
	for _, h := range faultHooks {
		out = append(out, c("-I", h, "1", "-j", FaultChain))
	}
	return out
}

// UndoDrop is what removes PlanDrop's rules, for either address family: the jumps, then
// the chain.
func UndoDrop() [][]string {
	var out [][]string
	for _, cmd := range []string{"iptables", "ip6tables"} {
		for _, h := range faultHooks {
			out = append(out, []string{cmd, "-w", "-D", h, "-j", FaultChain})
		}
		out = append(out, []string{cmd, "-w", "-F", FaultChain}, []string{cmd, "-w", "-X", FaultChain})
	}
	return out
}

func iptablesFor(ipv6 bool) string {
	if ipv6 {
		return "ip6tables"
	}
	return "iptables"
}
