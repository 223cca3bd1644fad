package hosts

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/link"
)

func joinAll(cmds [][]string) string {
	var b strings.Builder
	for _, c := range cmds {
		b.WriteString(strings.Join(c, " ") + "\n")
	}
	return b.String()
}

func TestPlanShapeRateOnly(t *testing.T) {
	p, err := PlanShape(ShapeTarget{Host: "client1", NIC: "eth0", Peer: netip.MustParseAddr("198.18.10.2"), KeepPorts: []uint16{22}},
		link.Condition{RateBps: 20_000_000})
	if err != nil {
		t.Fatal(err)
	}
	// 20 Mbit/s: burst max(2 frames, 25 000 B) and the lab's leaf limit, quantum 25 000 B.
	want := `tc qdisc replace dev eth0 root handle 1: htb default 0
tc class replace dev eth0 parent 1: classid 1:1 htb rate 20000000bit ceil 20000000bit burst 25000b cburst 25000b quantum 200000
tc qdisc replace dev eth0 parent 1:1 handle 10: pfifo limit 100
tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dst 198.18.10.2/32 match ip protocol 6 0xff match ip dport 22 0xffff flowid 1:
tc filter add dev eth0 parent 1: protocol ip prio 2 u32 match ip dst 198.18.10.2/32 match ip protocol 6 0xff match ip sport 22 0xffff flowid 1:
tc filter add dev eth0 parent 1: protocol ip prio 3 u32 match ip dst 198.18.10.2/32 flowid 1:1
ip link add wlifb-eth0 type ifb
ip link set dev wlifb-eth0 up
tc qdisc replace dev wlifb-eth0 root handle 1: htb default 0
tc class replace dev wlifb-eth0 parent 1: classid 1:1 htb rate 20000000bit ceil 20000000bit burst 25000b cburst 25000b quantum 200000
tc qdisc replace dev wlifb-eth0 parent 1:1 handle 10: pfifo limit 100
tc filter add dev wlifb-eth0 parent 1: protocol ip prio 1 u32 match ip src 198.18.10.2/32 flowid 1:1
tc qdisc add dev eth0 handle ffff: ingress
tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match ip src 198.18.10.2/32 match ip protocol 6 0xff match ip sport 22 0xffff flowid ffff:1
tc filter add dev eth0 parent ffff: protocol ip prio 2 u32 match ip src 198.18.10.2/32 match ip protocol 6 0xff match ip dport 22 0xffff flowid ffff:1
tc filter add dev eth0 parent ffff: protocol ip prio 3 u32 match ip src 198.18.10.2/32 action mirred egress redirect dev wlifb-eth0
`
	if got := joinAll(p.Apply); got != want {
		t.Errorf("apply:\n%s\nwant:\n%s", got, want)
	}
	if got, want := joinAll(p.Undo), joinAll(UndoShape("eth0")); got != want {
		t.Errorf("undo:\n%s\nwant:\n%s", got, want)
	}
	if p.Shaper != "htb" || strings.Contains(got(p), "iptables") || strings.Contains(got(p), "__delayer") {
		t.Errorf("a rate alone needs no delay line: shaper %q\n%s", p.Shaper, got(p))
	}
	if link.HTBLeafLimit(20_000_000, 0) != 100 || link.HTBBurst(20_000_000) != 25000 {
		t.Errorf("the expected plan above no longer matches internal/link's sizing")
	}
}

func TestPlanShapeNetemLeafAndIPv6(t *testing.T) {
	c := link.Condition{Delay: 10 * time.Millisecond, Jitter: time.Millisecond, LossPct: 0.5}
	p, err := PlanShape(ShapeTarget{Host: "c", NIC: "ens3", Peer: netip.MustParseAddr("2001:db8::2"), Netem: true}, c)
	if err != nil {
		t.Fatal(err)
	}
	got := joinAll(p.Apply)
	for _, w := range []string{
		"classid 1:1 htb rate 100000000000bit", // delay only: the class never holds back
		"parent 1:1 handle 10: netem limit ",
		" delay 10000us 1000us loss random 0.5%",
		"protocol ipv6 prio 1 u32 match ip6 dst 2001:db8::2/128 flowid 1:1",
		"protocol ipv6 prio 1 u32 match ip6 src 2001:db8::2/128 action mirred egress redirect dev wlifb-ens3",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("plan lacks %q:\n%s", w, got)
		}
	}
	if strings.Count(got, "netem") != 2 || p.Shaper != "htb+netem" {
		t.Errorf("want a netem leaf on the NIC and on the IFB (shaper %q):\n%s", p.Shaper, got)
	}
	if strings.Contains(got, "iptables") || strings.Contains(got, "__delayer") {
		t.Errorf("with netem no delay line runs:\n%s", got)
	}
}

func got(p Plan) string { return joinAll(p.Apply) }

func TestPlanShapeRefuses(t *testing.T) {
	peer := netip.MustParseAddr("198.18.10.2")
	_, err := PlanShape(ShapeTarget{Host: "client1", NIC: "eth0", Peer: peer}, link.Condition{Delay: time.Millisecond})
	if !errors.Is(err, link.ErrNoDelayLine) || !strings.Contains(err.Error(), "host client1") {
		t.Errorf("delay with neither netem nor NFQUEUE: %v", err)
	}
	if err := CheckShape(ShapeTarget{Host: "client1", NIC: "eth0", Peer: peer, NFQueue: true}, link.Condition{Delay: time.Millisecond}); err != nil {
		t.Errorf("delay with NFQUEUE is shaped: %v", err)
	}
	if _, err := PlanShape(ShapeTarget{Host: "client1", NIC: "eth0", Peer: peer, NFQueue: true}, link.Condition{Delay: time.Millisecond}); err == nil {
		t.Error("the delay line without a staged wirelab: want an error")
	}
	if p, err := PlanShape(ShapeTarget{Host: "client1", NIC: "eth0", Peer: peer}, link.Condition{}); err != nil || len(p.Apply) != 0 || len(p.Undo) == 0 {
		t.Errorf("unlimited link: want no shaping and the undo, got %v, %v", p, err)
	}
	if _, err := PlanShape(ShapeTarget{Host: "client1", Peer: peer}, link.Condition{RateBps: 1e6}); err == nil {
		t.Error("no NIC: want an error")
	}
	if _, err := PlanShape(ShapeTarget{Host: "client1", NIC: "eth0", Peer: peer}, link.Condition{RateBps: -1}); err == nil {
		t.Error("bad condition: want an error")
	}
}

func TestIFBName(t *testing.T) {
	if got := IFBName("eth0"); got != "wlifb-eth0" {
		t.Errorf("IFBName(eth0) = %q", got)
	}
	long := IFBName("enp0s31f6np0x")
	if len(long) > 15 || long == IFBName("enp0s31f6np0y") || long != IFBName("enp0s31f6np0x") {
		t.Errorf("long names: %q must fit IFNAMSIZ, be stable and differ", long)
	}
}

// Count keeps the classes on an unshaped link, far above any NIC's rate, so the study's
// bytes are counted there too; the kept ports still bypass them.
func TestPlanShapeCountKeepsClassesUnshaped(t *testing.T) {
	p, err := PlanShape(ShapeTarget{Host: "client1", NIC: "eth0", Peer: netip.MustParseAddr("198.18.10.2"),
		KeepPorts: []uint16{22}, Count: true}, link.Condition{})
	if err != nil {
		t.Fatal(err)
	}
	got := joinAll(p.Apply)
	for _, w := range []string{
		"tc class replace dev eth0 parent 1: classid 1:1 htb rate 100000000000bit",
		"tc class replace dev wlifb-eth0 parent 1: classid 1:1 htb rate 100000000000bit",
		"match ip dport 22 0xffff flowid 1:\n",
		"match ip dst 198.18.10.2/32 flowid 1:1\n",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("counting plan lacks %q:\n%s", w, got)
		}
	}
}

// Without netem the client's delay line makes the delay: the HTB leaves are the lab's FIFOs,
// the delayer starts with link's command line once the qdiscs are in place, and only then
// do the rules queue the peer's flows, the kept ports returned first as the tc filters
// keep them.
func TestPlanShapeDelayLineWithoutNetem(t *testing.T) {
	c := link.Condition{RateBps: 20_000_000, Delay: 10 * time.Millisecond, Jitter: time.Millisecond, LossPct: 0.5}
	tg := ShapeTarget{Host: "client1", NIC: "eth0", Peer: netip.MustParseAddr("198.18.10.2"), NFQueue: true,
		Agent: "/tmp/wirelab-x/wirelab", Dir: "/tmp/wirelab-x", KeepPorts: []uint16{22, 2222}}
	p, err := PlanShape(tg, c)
	if err != nil {
		t.Fatal(err)
	}
	if p.Shaper != "htb+nfqueue" {
		t.Errorf("shaper %q, want htb+nfqueue", p.Shaper)
	}
	leaf := "pfifo limit " + strconv.Itoa(link.HTBLeafLimit(c.RateBps, c.Delay))
	delayer := "/tmp/wirelab-x/wirelab " + strings.Join(link.DelayerArgs(c, []uint16{100, 101},
		"/run/wirelab-delayer-eth0.pid", "/tmp/wirelab-x/delayer.log", "/tmp/wirelab-x/delayer.json"), " ")
	wantTail := delayer + `
iptables -t mangle -N WIRELAB-DELAY
iptables -t mangle -A WIRELAB-DELAY -p tcp --dport 22 -j RETURN
iptables -t mangle -A WIRELAB-DELAY -p tcp --sport 22 -j RETURN
iptables -t mangle -A WIRELAB-DELAY -p tcp --dport 2222 -j RETURN
iptables -t mangle -A WIRELAB-DELAY -p tcp --sport 2222 -j RETURN
iptables -t mangle -A WIRELAB-DELAY -d 198.18.10.2 -j NFQUEUE --queue-num 100
iptables -t mangle -A WIRELAB-DELAY -s 198.18.10.2 -j NFQUEUE --queue-num 101
iptables -t mangle -I OUTPUT 1 -j WIRELAB-DELAY
iptables -t mangle -I INPUT 1 -j WIRELAB-DELAY
`
	all := joinAll(p.Apply)
	if !strings.HasSuffix(all, "action mirred egress redirect dev wlifb-eth0\n"+wantTail) {
		t.Errorf("want the tc plan, then the delayer, then its rules:\n%s\nending in:\n%s", all, wantTail)
	}
	if strings.Count(all, "parent 1:1 handle 10: "+leaf+"\n") != 2 || strings.Contains(all, "netem") {
		t.Errorf("want the lab's FIFO leaf (%s) on the NIC and the IFB, no netem:\n%s", leaf, all)
	}
	// Undo: the rules go before the delayer stops, the qdiscs after.
	undo := joinAll(p.Undo)
	rules, stop, qdisc := strings.Index(undo, "iptables -t mangle -D OUTPUT -j WIRELAB-DELAY"),
		strings.Index(undo, "wirelab-delayer-eth0.pid"), strings.Index(undo, "tc qdisc del dev eth0 root")
	if rules < 0 || stop < rules || qdisc < stop || !strings.Contains(undo, "ip6tables -t mangle -X WIRELAB-DELAY") {
		t.Errorf("undo order: rules (%d), delayer (%d), qdiscs (%d):\n%s", rules, stop, qdisc, undo)
	}
	// IPv6 peers get ip6tables and the same shape.
	tg.Peer = netip.MustParseAddr("2001:db8::2")
	p6, err := PlanShape(tg, c)
	if err != nil {
		t.Fatal(err)
	}
	if a := joinAll(p6.Apply); !strings.Contains(a, "ip6tables -t mangle -A WIRELAB-DELAY -s 2001:db8::2 -j NFQUEUE --queue-num 101\n") || strings.Contains(a, "\niptables") {
		t.Errorf("IPv6 plan:\n%s", a)
	}
}

// The dead-man switch's file holds everything UndoShape does except stopping the delayer,
// a shell script the file may not hold; the switch stops it itself (Deadman.DelayerPid).
func TestUndoFileIsUndoShapeWithoutTheScript(t *testing.T) {
	full, file := UndoShape("eth0"), UndoFile("eth0")
	var rest [][]string
	for _, c := range full {
		if c[0] != "sh" {
			rest = append(rest, c)
		}
	}
	if len(full) != len(file)+1 || joinAll(rest) != joinAll(file) {
		t.Errorf("UndoShape:\n%s\nUndoFile:\n%s\nwant the same but the delayer's stop", joinAll(full), joinAll(file))
	}
	if _, err := FormatUndo(full); err == nil {
		t.Error("the delayer's stop script cannot go in an undo file: want FormatUndo to refuse it")
	}
}
