package link

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// cmds reads a plan written one command a line, words separated by blanks.
func cmds(s string) [][]string {
	var out [][]string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		out = append(out, strings.Fields(l))
	}
	return out
}

// The lab queues what the wire forwards, one queue per egress interface; the jump comes
// last so nothing is queued before the rules are complete.
func TestLabQueuePlan(t *testing.T) {
	p := labQueues(Wire{NS: "w", Ifaces: []string{"to-server", "to-client"}})
	want := `iptables -t mangle -N WIRELAB-DELAY
iptables -t mangle -A WIRELAB-DELAY -o to-server -j NFQUEUE --queue-num 100
iptables -t mangle -A WIRELAB-DELAY -o to-client -j NFQUEUE --queue-num 101
iptables -t mangle -I FORWARD 1 -j WIRELAB-DELAY
`
	if got := p.Apply(); !reflect.DeepEqual(got, cmds(want)) {
		t.Errorf("apply:\n%q\nwant:\n%s", got, want)
	}
	wantUndo := `iptables -t mangle -D FORWARD -j WIRELAB-DELAY
iptables -t mangle -F WIRELAB-DELAY
iptables -t mangle -X WIRELAB-DELAY
`
	if got := p.Undo(); !reflect.DeepEqual(got, cmds(wantUndo)) {
		t.Errorf("undo:\n%q\nwant:\n%s", got, wantUndo)
	}
	if !slices.Equal(p.Nums(), []uint16{100, 101}) {
		t.Errorf("queues %v", p.Nums())
	}
}

// Packets that must pass undelayed return before any queue rule sees them, and every hook
// jumps to the one chain.
func TestQueuePlanPassFirst(t *testing.T) {
	p := QueuePlan{Cmd: "ip6tables", Hooks: []string{"OUTPUT", "INPUT"},
		Pass:   [][]string{{"-p", "tcp", "--dport", "22"}},
		Queues: [][]string{{"-d", "2001:db8::2"}, {"-s", "2001:db8::2"}}}
	want := `ip6tables -t mangle -N WIRELAB-DELAY
ip6tables -t mangle -A WIRELAB-DELAY -p tcp --dport 22 -j RETURN
ip6tables -t mangle -A WIRELAB-DELAY -d 2001:db8::2 -j NFQUEUE --queue-num 100
ip6tables -t mangle -A WIRELAB-DELAY -s 2001:db8::2 -j NFQUEUE --queue-num 101
ip6tables -t mangle -I OUTPUT 1 -j WIRELAB-DELAY
ip6tables -t mangle -I INPUT 1 -j WIRELAB-DELAY
`
	if got := p.Apply(); !reflect.DeepEqual(got, cmds(want)) {
		t.Errorf("apply:\n%q\nwant:\n%s", got, want)
	}
	if got := p.Undo(); !reflect.DeepEqual(got[:2], cmds("ip6tables -t mangle -D OUTPUT -j WIRELAB-DELAY\nip6tables -t mangle -D INPUT -j WIRELAB-DELAY")) {
		t.Errorf("undo must remove both jumps before the chain:\n%q", got)
	}
}

// The lab's delayer gets its queues from the lab's plan and the condition's numbers.
func TestDelayerArgs(t *testing.T) {
	c := Condition{RateBps: 20_000_000, Delay: 10 * time.Millisecond, Jitter: time.Millisecond, LossPct: 0.5}
	got := strings.Join(DelayerArgs(c, []uint16{100, 101}, "/run/d.pid", "/tmp/d.log", "/tmp/d.json"), " ")
	want := "__delayer --detach --queue 100,101 --delay 10ms --jitter 1ms --loss 0.5 --max-queue 1024 --seed 1 " +
		"--pid-file /run/d.pid --log-file /tmp/d.log --stats-file /tmp/d.json"
	if got != want {
		t.Errorf("delayer args\n %s\nwant\n %s", got, want)
	}
	name, args := delayerArgs(Wire{NS: "w", Ifaces: []string{"a", "b"}, Self: "/wirelab", StateDir: "/s"}, c)
	if all := name + " " + strings.Join(args, " "); !strings.Contains(all, "/wirelab __delayer --detach --queue 100,101 ") {
		t.Errorf("lab delayer: %s", all)
	}
}
