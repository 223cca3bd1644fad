package link

import (
	"strconv"
	"strings"
)

// DelayChain is the mangle chain that holds the rules sending packets to the delay line,
// in the lab's wire namespace and on a real host alike, so teardown removes them all
// without knowing which rules a Setup made.
const DelayChain = "WIRELAB-DELAY"

const (
	nfqBaseQueue = 100 // queue numbers are per namespace; one per delay line from here
	delayerSeed  = 1   // fixed: the same loss pattern every run
)

// QueuePlan is which packets the delay line takes, as data: the lab queues what its wire
// forwards, one queue per egress interface; a real client queues only its flows with the
// server, one queue per direction. The rules have no --queue-bypass: if the delayer dies
// the packets it would take are dropped (fail closed) rather than silently carried
// undelayed.
type QueuePlan struct {
	Cmd   string   // "iptables", or "ip6tables" for an IPv6 peer
	Hooks []string // built-in mangle chains whose first rule jumps to DelayChain
	// Pass are matches whose packets return from DelayChain undelayed; they are tested
	// before any queue.
	Pass [][]string
	// Queues are matches, in order: the packets of Queues[i] wait in queue nfqBaseQueue+i.
	Queues [][]string
}

// Nums are the queue numbers, one per entry of Queues: the delayer's --queue.
func (p QueuePlan) Nums() []uint16 {
	out := make([]uint16, len(p.Queues))
	for i := range p.Queues {
		out[i] = uint16(nfqBaseQueue + i)
	}
	return out
}

// Apply is the commands (argv) that make the chain, its rules, and last the jumps to it,
// so no packet is queued before every rule is in place.
func (p QueuePlan) Apply() [][]string {
	cmds := [][]string{p.cmd("-N", DelayChain)}
	for _, m := range p.Pass {
		cmds = append(cmds, p.cmd(append(append([]string{"-A", DelayChain}, m...), "-j", "RETURN")...))
	}
	for i, m := range p.Queues {
		cmds = append(cmds, p.cmd(append(append([]string{"-A", DelayChain}, m...),
			"-j", "NFQUEUE", "--queue-num", strconv.Itoa(nfqBaseQueue+i))...))
	}
	for _, h := range p.Hooks {
		cmds = append(cmds, p.cmd("-I", h, "1", "-j", DelayChain))
	}
	return cmds
}

// Undo is the commands that remove what Apply made, jumps first (so nothing is queued to
// a queue nobody reads), then the chain. Each fails harmlessly on what is already gone.
func (p QueuePlan) Undo() [][]string {
	var cmds [][]string
	for _, h := range p.Hooks {
		cmds = append(cmds, p.Unhook(h))
	}
	return append(cmds, p.DropChain()...)
}

// DropChain is the commands that empty and delete DelayChain once no jump leads to it.
func (p QueuePlan) DropChain() [][]string {
	return [][]string{p.cmd("-F", DelayChain), p.cmd("-X", DelayChain)}
}

// Unhook is the command that removes one jump from hook to DelayChain.
func (p QueuePlan) Unhook(hook string) []string { return p.cmd("-D", hook, "-j", DelayChain) }

func (p QueuePlan) cmd(args ...string) []string {
	return append([]string{p.Cmd, "-t", "mangle"}, args...)
}

// labQueues is the lab's plan: everything the wire forwards, one queue per egress
// interface.
func labQueues(w Wire) QueuePlan {
	p := QueuePlan{Cmd: "iptables", Hooks: []string{"FORWARD"}}
	for _, ifc := range w.Ifaces {
		p.Queues = append(p.Queues, []string{"-o", ifc})
	}
	return p
}

// DelayerArgs is the command line, after the wirelab binary, that starts a delayer
// detached with one delay line per queue, making c's delay, jitter and loss with a fixed
// seed and holding what c's rate carries over the delay (QueueLen). pid, log and stats are
// its files. The lab and real hosts start it alike.
func DelayerArgs(c Condition, queues []uint16, pid, log, stats string) []string {
	qs := make([]string, len(queues))
	for i, q := range queues {
		qs[i] = strconv.Itoa(int(q))
	}
	return []string{"__delayer", "--detach",
		"--queue", strings.Join(qs, ","),
		"--delay", c.Delay.String(), "--jitter", c.Jitter.String(),
		"--loss", strconv.FormatFloat(c.LossPct, 'f', -1, 64),
		"--max-queue", strconv.Itoa(QueueLen(c.RateBps, c.Delay+c.Jitter)),
		"--seed", strconv.Itoa(delayerSeed),
		"--pid-file", pid, "--log-file", log, "--stats-file", stats}
}
