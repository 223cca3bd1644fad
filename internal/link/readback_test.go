package link

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// shownDev parses the fixtures of one device's qdiscs and classes, as a read-back does.
func shownDev(t *testing.T, dev, qdiscs, classes string) []TCObject {
	t.Helper()
	q, err := ParseTCShow(dev, readFixture(t, qdiscs))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseTCShow(dev, readFixture(t, classes))
	if err != nil {
		t.Fatal(err)
	}
	return append(q, c...)
}

// plan20 is the tc part of a real host's plan at 20 mbit (what hosts.PlanShape makes on
// eth0 and its IFB), from link's own HTB plan.
func plan20() [][]string {
	var cmds [][]string
	for _, dev := range []string{"eth0", "wlifb-eth0"} {
		for _, a := range HTBPlan(dev, "root", "1", "0", 20_000_000, []string{"pfifo", "limit", "100"}) {
			cmds = append(cmds, append([]string{"tc"}, a...))
		}
		cmds = append(cmds, []string{"tc", "filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match", "ip", "dst", "198.18.77.2/32", "flowid", "1:1"})
	}
	return append(cmds, []string{"ip", "link", "add", "wlifb-eth0", "type", "ifb"},
		[]string{"tc", "qdisc", "add", "dev", "eth0", "handle", "ffff:", "ingress"})
}

func TestParseTCShowReadsQdiscsAndClassesWithCounters(t *testing.T) {
	got := shownDev(t, "eth0", "tc_qdisc_shaped_nic_iproute2-6.1.txt", "tc_class_shaped_nic_iproute2-6.1.txt")
	want := []TCObject{
		{Dev: "eth0", Kind: "htb", Handle: "1:", Root: true},
		{Dev: "eth0", Kind: "pfifo", Handle: "10:", Parent: "1:1"},
		{Dev: "eth0", Kind: "ingress", Handle: "ffff:", Parent: "ffff:fff1"},
		{Dev: "eth0", Class: true, Kind: "htb", Handle: "1:1", Root: true, RateBps: 20_000_000, Bytes: 4900, Packets: 50},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if o, err := ParseTCShow("eth0", readFixture(t, "tc_class_unlimited_iproute2-6.1.txt")); err != nil || len(o) != 1 || o[0].RateBps != 100_000_000_000 {
		t.Errorf("unlimited class: %+v, %v", o, err)
	}
}

func TestPlannedTCIsWhatThePlanMakes(t *testing.T) {
	got := PlannedTC(plan20())
	want := []TCObject{
		{Dev: "eth0", Kind: "htb", Handle: "1:", Root: true},
		{Dev: "eth0", Class: true, Kind: "htb", Handle: "1:1", Root: true, RateBps: 20_000_000},
		{Dev: "eth0", Kind: "pfifo", Handle: "10:", Parent: "1:1"},
		{Dev: "wlifb-eth0", Kind: "htb", Handle: "1:", Root: true},
		{Dev: "wlifb-eth0", Class: true, Kind: "htb", Handle: "1:1", Root: true, RateBps: 20_000_000},
		{Dev: "wlifb-eth0", Kind: "pfifo", Handle: "10:", Parent: "1:1"},
		{Dev: "eth0", Kind: "ingress", Handle: "ffff:"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestMissingTCSaysWhatIsGoneAndWhatIsThereInstead(t *testing.T) {
	want := PlannedTC(plan20())
	shaped := map[string][]TCObject{
		"eth0":       shownDev(t, "eth0", "tc_qdisc_shaped_nic_iproute2-6.1.txt", "tc_class_shaped_nic_iproute2-6.1.txt"),
		"wlifb-eth0": shownDev(t, "wlifb-eth0", "tc_qdisc_shaped_ifb_iproute2-6.1.txt", "tc_class_shaped_ifb_iproute2-6.1.txt"),
	}
	if got := MissingTC(want, shaped); got != nil {
		t.Errorf("as planned: %q", got)
	}
	if b, n := CountedBytes(want, shaped); b != 2940+4900 || n != 2 {
		t.Errorf("counted %d bytes in %d classes, want 7840 in 2", b, n)
	}
	cleared := map[string][]TCObject{
		"eth0": shownDev(t, "eth0", "tc_qdisc_cleared_veth_iproute2-6.1.txt", "tc_class_cleared_veth_iproute2-6.1.txt"),
	}
	got := MissingTC(want, cleared)
	wantMsg := []string{"its HTB class 1:1 on eth0 is gone (qdisc noqueue)", "device wlifb-eth0 is gone"}
	if !reflect.DeepEqual(got, wantMsg) {
		t.Errorf("cleared: %q, want %q", got, wantMsg)
	}
	if _, n := CountedBytes(want, cleared); n != 0 {
		t.Errorf("cleared: %d classes counted", n)
	}
	// The class is there at another rate (another run's plan, or a hand-made change).
	slow := map[string][]TCObject{"eth0": append([]TCObject(nil), shaped["eth0"]...), "wlifb-eth0": shaped["wlifb-eth0"]}
	slow["eth0"][3].RateBps = 10_000_000
	if got := MissingTC(want, slow); len(got) != 1 || got[0] != "its HTB class 1:1 on eth0 runs at 10mbit, not 20mbit" {
		t.Errorf("slow: %q", got)
	}
	// Read back as tc rounds it: within the slack.
	slow["eth0"][3].RateBps = 20_000_000 - 8
	if got := MissingTC(want, slow); got != nil {
		t.Errorf("a rate tc rounded: %q", got)
	}
	// The leaf qdisc alone is gone: named with the root still there.
	leafless := map[string][]TCObject{"eth0": {shaped["eth0"][0], shaped["eth0"][2], shaped["eth0"][3]}, "wlifb-eth0": shaped["wlifb-eth0"]}
	if got := MissingTC(want, leafless); len(got) != 1 || got[0] != "its pfifo qdisc 10: on eth0 is gone (qdisc htb)" {
		t.Errorf("leafless: %q", got)
	}
}

func TestMissingRulesOfTheDelayLine(t *testing.T) {
	p := QueuePlan{Cmd: "iptables", Hooks: []string{"OUTPUT", "INPUT"},
		Pass:   [][]string{{"-p", "tcp", "--dport", "22"}, {"-p", "tcp", "--sport", "22"}},
		Queues: [][]string{{"-d", "198.18.77.2"}, {"-s", "198.18.77.2"}}}
	listing := readFixture(t, "iptables_mangle_delay_line.txt")
	if got := MissingRules(p.Apply(), listing); got != nil {
		t.Errorf("as planned: %q", got)
	}
	var cut []string
	for _, l := range strings.Split(string(listing), "\n") {
		if !strings.Contains(l, "NFQUEUE") && l != "-A OUTPUT -j WIRELAB-DELAY" {
			cut = append(cut, l)
		}
	}
	want := []string{"its delay line's rules are gone (chain WIRELAB-DELAY has 2 of its 4 rules)", "the jump from OUTPUT to WIRELAB-DELAY is gone"}
	if got := MissingRules(p.Apply(), []byte(strings.Join(cut, "\n"))); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
