package hosts

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net/netip"
	"strconv"

	"github.com/wirelab/wirelab/internal/link"
)

// ShapeTarget is where a real link is shaped: the client's NIC, only toward one peer.
type ShapeTarget struct {
	Host  string     // the client host's name, for errors
	NIC   string     // the client NIC the traffic to the peer leaves by
	Peer  netip.Addr // the server's address: the only traffic shaped, both directions
	Netem bool       // the client's kernel has sch_netem
	// KeepPorts are TCP ports whose traffic with the peer is never shaped, as source or
	// destination, either way: the SSH ports of client and server, so a wirelab that runs
	// on the client itself keeps an unshaped control connection to the server.
	KeepPorts []uint16
	// Count keeps the classes on an unshaped link too (at a rate far above any NIC), so the
	// peer's bytes are counted by the same classes on every link a study measures.
	Count bool
}

// Plan is the exact commands (argv, no shell) that shape a target and undo it.
type Plan struct {
	IFB   string     // the IFB device the return direction is shaped on
	Apply [][]string // in order, on a NIC Undo has cleared
	Undo  [][]string // idempotent: each tolerates what is already gone
}

// ErrNetemNeeded is returned for delay, jitter or loss on a kernel without sch_netem: on a
// real NIC there is no NFQUEUE delayer (it would queue every flow of the host).
var ErrNetemNeeded = errors.New("delay, jitter and loss on a real NIC need sch_netem")

// Handles of the plan, on the NIC and on the IFB alike: HTB root 1:, the shaped class 1:1
// with its leaf 10:. Unclassified traffic (default 0) bypasses the classes through HTB's
// direct queue, unshaped: there is no default class, because any class has a rate and
// would cap the host's other traffic.
const (
	ShapedClass = "1:1" // its byte counters are a real-host study's wire bytes
	leafHandle  = "10:"
	// unlimitedClassRate is the class rate of an unlimited link (only delay or loss asked,
	// or only counting): far above any NIC, so the class never holds a packet back.
	unlimitedClassRate int64 = 100_000_000_000
)

// IFBName is the IFB device wirelab makes for nic: deterministic, so `down` finds it
// without state, and at most 15 bytes (IFNAMSIZ).
func IFBName(nic string) string {
	if n := "wlifb-" + nic; len(n) <= 15 {
		return n
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(nic))
	return fmt.Sprintf("wlifb-%08x", h.Sum32())
}

// PlanShape returns the commands that shape c on t.NIC toward t.Peer and back:
//
//   - egress: HTB root on the NIC whose only class is reached by a u32 filter on
//     dst = peer; everything else goes through HTB's direct queue untouched, and so do
//     the peer's packets on a kept port (the SSH control connections), filtered first;
//   - ingress: the NIC's ingress qdisc lets kept ports pass, then redirects (mirred) only
//     src = peer packets to an IFB device, shaped the same way with a filter on src = peer.
//
// The leaf is netem (delay, jitter, loss, sized like the lab's) when c needs it, else a
// pfifo sized like the lab's HTB leaf. Rates and bursts come from internal/link, so a
// remote point is shaped with the lab's numbers.
func PlanShape(t ShapeTarget, c link.Condition) (Plan, error) {
	if err := c.Validate(); err != nil {
		return Plan{}, fmt.Errorf("host %s: shape %s: %w", t.Host, t.NIC, err)
	}
	if t.NIC == "" || !t.Peer.IsValid() {
		return Plan{}, fmt.Errorf("host %s: shape: need the NIC and the server address", t.Host)
	}
	delayLine := c.NeedsDelayLine()
	if delayLine && !t.Netem {
		return Plan{}, fmt.Errorf("host %s: %s: %w; this kernel has none: load it (modprobe sch_netem) or shape rate only",
			t.Host, c, ErrNetemNeeded)
	}
	ifb := IFBName(t.NIC)
	p := Plan{IFB: ifb, Undo: UndoShape(t.NIC)}
	if c.Unlimited() && !delayLine && !t.Count {
		return p, nil // an unshaped link: nothing to apply
	}
	f := filterSpec{dev: t.NIC, proto: "ip", match: "ip", peer: t.Peer.String() + "/32"}
	if t.Peer.Is6() {
		f.proto, f.match, f.peer = "ipv6", "ip6", t.Peer.String()+"/128"
	}
	ifbF := f
	ifbF.dev = ifb
	p.Apply = append(p.Apply, classPlan(t.NIC, c, delayLine)...)
	// Egress: kept ports to HTB's direct queue (flowid 1:, the qdisc itself), then the peer.
	prio := 1
	for _, port := range t.KeepPorts {
		for _, dir := range []string{"dport", "sport"} {
			p.Apply = append(p.Apply, f.filter("1:", prio, "dst", dir, port, "flowid", "1:"))
			prio++
		}
	}
	p.Apply = append(p.Apply, f.filter("1:", prio, "dst", "", 0, "flowid", ShapedClass),
		[]string{"ip", "link", "add", ifb, "type", "ifb"},
		[]string{"ip", "link", "set", "dev", ifb, "up"},
	)
	p.Apply = append(p.Apply, classPlan(ifb, c, delayLine)...)
	p.Apply = append(p.Apply, ifbF.filter("1:", 1, "src", "", 0, "flowid", ShapedClass),
		[]string{"tc", "qdisc", "add", "dev", t.NIC, "handle", "ffff:", "ingress"})
	// Ingress: kept ports match a filter with no action, which ends the filter walk and
	// lets the packet pass (no act_gact needed: kernels often lack it); the rest of the
	// peer's packets go through the IFB.
	prio = 1
	for _, port := range t.KeepPorts {
		for _, dir := range []string{"sport", "dport"} {
			p.Apply = append(p.Apply, f.filter("ffff:", prio, "src", dir, port, "flowid", "ffff:1"))
			prio++
		}
	}
	p.Apply = append(p.Apply, f.filter("ffff:", prio, "src", "", 0, "action", "mirred", "egress", "redirect", "dev", ifb))
	return p, nil
}

// filterSpec is one device's u32 match on the peer address.
type filterSpec struct{ dev, proto, match, peer string }

// filter is `tc filter add` on parent at prio matching the peer as side ("src"/"dst"),
// and TCP port as portDir ("sport"/"dport") when portDir is set, then verdict.
func (f filterSpec) filter(parent string, prio int, side, portDir string, port uint16, verdict ...string) []string {
	cmd := []string{"tc", "filter", "add", "dev", f.dev, "parent", parent, "protocol", f.proto,
		"prio", strconv.Itoa(prio), "u32", "match", f.match, side, f.peer}
	if portDir != "" {
		cmd = append(cmd, "match", f.match, "protocol", "6", "0xff",
			"match", f.match, portDir, strconv.Itoa(int(port)), "0xffff")
	}
	return append(cmd, verdict...)
}

// classPlan is the HTB root, the shaped class and its leaf on dev. The ingress redirect is
// added last in PlanShape, so no packet reaches the IFB before it is shaped.
func classPlan(dev string, c link.Condition, delayLine bool) [][]string {
	rateBps := c.RateBps
	if c.Unlimited() {
		rateBps = unlimitedClassRate
	}
	rate := strconv.FormatInt(rateBps, 10) + "bit"
	burst := strconv.Itoa(link.HTBBurst(rateBps)) + "b"
	out := [][]string{
		{"tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default", "0"},
		{"tc", "class", "replace", "dev", dev, "parent", "1:", "classid", ShapedClass, "htb",
			"rate", rate, "ceil", rate, "burst", burst, "cburst", burst,
			"quantum", strconv.Itoa(link.HTBQuantum(rateBps))},
	}
	if !delayLine {
		return append(out, []string{"tc", "qdisc", "replace", "dev", dev, "parent", ShapedClass,
			"handle", leafHandle, "pfifo", "limit", strconv.Itoa(link.HTBLeafLimit(c.RateBps, c.Delay))})
	}
	leaf := []string{"tc", "qdisc", "replace", "dev", dev, "parent", ShapedClass, "handle", leafHandle,
		"netem", "limit", strconv.Itoa(link.QueueLen(c.RateBps, c.Delay+c.Jitter)),
		"delay", strconv.FormatInt(c.Delay.Microseconds(), 10) + "us"}
	if c.Jitter > 0 {
		leaf = append(leaf, strconv.FormatInt(c.Jitter.Microseconds(), 10)+"us")
	}
	if c.LossPct > 0 {
		leaf = append(leaf, "loss", "random", strconv.FormatFloat(c.LossPct, 'f', -1, 64)+"%")
	}
	return append(out, leaf)
}

// UndoShape is what removes any shaping PlanShape made on nic: its root and ingress
// qdiscs (their classes and filters go with them; the kernel puts the NIC's default root
// qdisc back) and the IFB device. The dead-man switch and `wirelab down` run it.
func UndoShape(nic string) [][]string {
	return [][]string{
		{"tc", "qdisc", "del", "dev", nic, "ingress"},
		{"tc", "qdisc", "del", "dev", nic, "root"},
		{"ip", "link", "del", IFBName(nic)},
	}
}
