package hosts

import (
	"fmt"
	"hash/fnv"
	"net/netip"
	"path"
	"strconv"

	"github.com/wirelab/wirelab/internal/link"
)

// ShapeTarget is where a real link is shaped: the client's NIC, only toward one peer.
type ShapeTarget struct {
	Host  string     // the client host's name, for errors
	NIC   string     // the client NIC the traffic to the peer leaves by
	Peer  netip.Addr // the server's address: the only traffic shaped, both directions
	Netem bool       // the client's kernel has sch_netem
	// NFQueue: the client's iptables can queue packets to user space. Without netem,
	// delay, jitter and loss are then made by wirelab's delay line there, on the flows with
	// the peer only.
	NFQueue bool
	// Agent is the wirelab binary staged on the client, which runs the delay line; Dir is
	// the staged directory, which holds its log and stats. RemoteLink sets both from its own.
	Agent, Dir string
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
	IFB string // the IFB device the return direction is shaped on
	// Shaper is how the link is made, as results record it: htb, htb+netem or htb+nfqueue.
	Shaper link.Shaper
	Apply  [][]string // in order, on a NIC Undo has cleared
	Undo   [][]string // idempotent: each tolerates what is already gone (UndoShape)
}

// Handles of the plan, on the NIC and on the IFB alike: HTB root 1:, the shaped class 1:1
// with its leaf 10: (link.HTBPlan's, major 1). Unclassified traffic (default 0) bypasses
// the classes through HTB's direct queue, unshaped: there is no default class, because any
// class has a rate and would cap the host's other traffic.
const (
	ShapedClass = "1:1" // its byte counters are a real-host study's wire bytes
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
// Delay, jitter and loss are a netem leaf when the kernel has netem, else the delay line
// (`wirelab __delayer`, detached) fed by iptables rules that queue only the flows with the
// peer, kept ports excepted (delayQueues). The HTB cap, its leaf, the netem parameters, the
// delayer's command line and its rules are internal/link's own plans, so a remote point is
// shaped with the lab's numbers.
func PlanShape(t ShapeTarget, c link.Condition) (Plan, error) {
	line, err := checkShape(t, c)
	if err != nil {
		return Plan{}, err
	}
	delayLine, netem := line != "", line == link.ShaperNetem
	if delayLine && !netem && (t.Agent == "" || t.Dir == "") {
		return Plan{}, fmt.Errorf("host %s: shape %s: the delay line needs wirelab staged on the host", t.Host, t.NIC)
	}
	ifb := IFBName(t.NIC)
	p := Plan{IFB: ifb, Shaper: link.Made(true, line), Undo: UndoShape(t.NIC)}
	if c.Unlimited() && !delayLine && !t.Count {
		return p, nil // an unshaped link: nothing to apply
	}
	f := filterSpec{dev: t.NIC, proto: "ip", match: "ip", peer: t.Peer.String() + "/32"}
	if t.Peer.Is6() {
		f.proto, f.match, f.peer = "ipv6", "ip6", t.Peer.String()+"/128"
	}
	ifbF := f
	ifbF.dev = ifb
	p.Apply = append(p.Apply, classPlan(t.NIC, c, delayLine && netem)...)
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
	p.Apply = append(p.Apply, classPlan(ifb, c, delayLine && netem)...)
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
	if delayLine && !netem {
		p.Apply = append(p.Apply, delayLinePlan(t, c)...)
	}
	return p, nil
}

// CheckShape refuses, before anything is staged or changed, what PlanShape cannot shape:
// a bad condition, a target without NIC or peer, and delay, jitter or loss on a client
// with neither netem nor NFQUEUE (link.ErrNoDelayLine).
func CheckShape(t ShapeTarget, c link.Condition) error {
	_, err := checkShape(t, c)
	return err
}

// checkShape is CheckShape returning the delay line the client makes c with (link.Supports:
// netem where its kernel has it): "" when c needs none. HTB is not probed on a real host:
// every distribution kernel has it, and the plan needs its classes even unshaped (Count).
func checkShape(t ShapeTarget, c link.Condition) (link.Shaper, error) {
	if err := c.Validate(); err != nil {
		return "", fmt.Errorf("host %s: shape %s: %w", t.Host, t.NIC, err)
	}
	if t.NIC == "" || !t.Peer.IsValid() {
		return "", fmt.Errorf("host %s: shape: need the NIC and the server address", t.Host)
	}
	line, err := link.Supports(link.Capabilities{HTB: true, Netem: t.Netem, NFQueue: t.NFQueue}, link.ShaperAuto, c)
	if err != nil {
		return "", fmt.Errorf("host %s: %s: %w", t.Host, c, err)
	}
	return line, nil
}

// Files of the client's delay line. The pid file is per NIC in /run (root's, like the
// switch's), so `down --hosts` finds the delayer without any state of the run.
func delayerPidFile(nic string) string { return "/run/wirelab-delayer-" + nic + ".pid" }

// DelayerStatsFile is where the client's delayer, started with its files in dir (the
// target's Dir), writes its stats.
func DelayerStatsFile(dir string) string { return path.Join(dir, "delayer.json") }

// delayQueues is the delay line's iptables plan on the client: the packets the client
// sends to the peer (mangle OUTPUT) wait in one queue, those it receives from the peer
// (INPUT) in the other, and the kept ports return first, as the tc filters keep them. The
// hooks see local traffic only, so nothing the host forwards is ever queued.
func delayQueues(t ShapeTarget) link.QueuePlan {
	p := queueHooks(t.Peer.Is6())
	for _, port := range t.KeepPorts {
		for _, dir := range []string{"--dport", "--sport"} {
			p.Pass = append(p.Pass, []string{"-p", "tcp", dir, strconv.Itoa(int(port))})
		}
	}
	p.Queues = [][]string{{"-d", t.Peer.String()}, {"-s", t.Peer.String()}}
	return p
}

// DelayRules is the command that lists the delay line's rules on t's client.
func DelayRules(t ShapeTarget) []string {
	return []string{queueHooks(t.Peer.Is6()).Cmd, "-t", "mangle", "-S", link.DelayChain}
}

// queueHooks is the part of the client's queue plan its undo needs: the command and the
// hooks that jump to the chain.
func queueHooks(ipv6 bool) link.QueuePlan {
	cmd := "iptables"
	if ipv6 {
		cmd = "ip6tables"
	}
	return link.QueuePlan{Cmd: cmd, Hooks: []string{"OUTPUT", "INPUT"}}
}

// delayLinePlan starts the delayer (it returns once its queues are bound) and then adds
// the rules that feed it, so no packet is queued to a queue nobody reads. The delay sits
// before the HTB cap for what the client sends and after the IFB's for what it receives:
// either way a packet pays both.
func delayLinePlan(t ShapeTarget, c link.Condition) [][]string {
	q := delayQueues(t)
	start := append([]string{t.Agent}, link.DelayerArgs(c, q.Nums(), delayerPidFile(t.NIC),
		path.Join(t.Dir, "delayer.log"), DelayerStatsFile(t.Dir))...)
	return append([][]string{start}, q.Apply()...)
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

// classPlan is the HTB root, the shaped class and its leaf on dev: link's HTB plan with
// HTB's direct queue as the default, and a netem leaf when netem makes the delay. The
// ingress redirect is added last in PlanShape, so no packet reaches the IFB before it is
// shaped.
func classPlan(dev string, c link.Condition, netem bool) [][]string {
	rateBps := c.RateBps
	if c.Unlimited() {
		rateBps = unlimitedClassRate
	}
	leaf := link.PfifoLeaf(c)
	if netem {
		leaf = link.NetemParams(c)
	}
	var out [][]string
	for _, args := range link.HTBPlan(dev, "root", "1", "0", rateBps, leaf) {
		out = append(out, append([]string{"tc"}, args...))
	}
	return out
}

// UndoShape is what removes any shaping PlanShape made on nic: the delay line's rules
// and a wire fault's (jumps first, for either address family: the peer's is not known
// here), then the
// delayer, then the root and ingress qdiscs (their classes and filters go with them; the
// kernel puts the NIC's default root qdisc back) and the IFB device. RemoteLink and
// `wirelab down --hosts` run it over SSH.
func UndoShape(nic string) [][]string {
	return append(append(undoRules(), StopDelayer(nic)), undoQdiscs(nic)...)
}

// UndoFile is UndoShape without stopping the delayer, which is a shell script: what the
// dead-man switch's undo file holds (tc, ip and iptables only); the switch stops the
// delayer itself (Deadman.DelayerPid).
func UndoFile(nic string) [][]string { return append(undoRules(), undoQdiscs(nic)...) }

// StopDelayer is the command that stops the delay line of nic, named by its pid file, and
// waits for it to release what it holds and exit.
func StopDelayer(nic string) []string { return retire(delayerPidFile(nic), delayerMark) }

// undoRules are the iptables rules' undo: the delay line's and a wire fault's (PlanDrop).
func undoRules() [][]string {
	return append(append(queueHooks(false).Undo(), queueHooks(true).Undo()...), UndoDrop()...)
}

func undoQdiscs(nic string) [][]string {
	return [][]string{
		{"tc", "qdisc", "del", "dev", nic, "ingress"},
		{"tc", "qdisc", "del", "dev", nic, "root"},
		{"ip", "link", "del", IFBName(nic)},
	}
}
