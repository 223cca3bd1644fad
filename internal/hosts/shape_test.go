package hosts

import (
	"errors"
	"net/netip"
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
	if got, want := joinAll(p.Undo), "tc qdisc del dev eth0 ingress\ntc qdisc del dev eth0 root\nip link del wlifb-eth0\n"; got != want {
		t.Errorf("undo:\n%s\nwant:\n%s", got, want)
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
	if strings.Count(got, "netem") != 2 {
		t.Errorf("want a netem leaf on the NIC and on the IFB:\n%s", got)
	}
}

func TestPlanShapeRefuses(t *testing.T) {
	peer := netip.MustParseAddr("198.18.10.2")
	_, err := PlanShape(ShapeTarget{Host: "client1", NIC: "eth0", Peer: peer}, link.Condition{Delay: time.Millisecond})
	if !errors.Is(err, ErrNetemNeeded) || !strings.Contains(err.Error(), "host client1") {
		t.Errorf("delay without netem: %v", err)
	}
	if p, err := PlanShape(ShapeTarget{Host: "client1", NIC: "eth0", Peer: peer}, link.Condition{}); err != nil || len(p.Apply) != 0 || len(p.Undo) != 3 {
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
