package hosts

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// A wire fault drops the peer's traffic on the shaped host but the SSH ports, which
// return first; the jumps come last; every undo of the shaping removes it too.
func TestPlanDropKeepsSSHAndIsUndoneWithTheShaping(t *testing.T) {
	tgt := ShapeTarget{NIC: "eth0", Peer: netip.MustParseAddr("198.18.40.2"), KeepPorts: []uint16{22, 2222}}
	var lines []string
	for _, c := range PlanDrop(tgt) {
		lines = append(lines, strings.Join(c, " "))
	}
	want := []string{
		"iptables -w -N WIRELAB-FAULT",
		"iptables -w -A WIRELAB-FAULT -p tcp --dport 22 -j RETURN",
		"iptables -w -A WIRELAB-FAULT -p tcp --sport 22 -j RETURN",
		"iptables -w -A WIRELAB-FAULT -p tcp --dport 2222 -j RETURN",
		"iptables -w -A WIRELAB-FAULT -p tcp --sport 2222 -j RETURN",
		"iptables -w -A WIRELAB-FAULT -d 198.18.40.2 -j DROP",
		"iptables -w -A WIRELAB-FAULT -s 198.18.40.2 -j DROP",
		"iptables -w -I OUTPUT 1 -j WIRELAB-FAULT",
		"iptables -w -I INPUT 1 -j WIRELAB-FAULT",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("PlanDrop:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	tgt.Peer = netip.MustParseAddr("2001:db8::2")
	if c := PlanDrop(tgt); c[0][0] != "ip6tables" {
		t.Errorf("an IPv6 peer: %v, want ip6tables", c[0])
	}
	for _, undo := range [][][]string{UndoShape("eth0"), UndoFile("eth0")} {
		for _, u := range UndoDrop() {
			if !slices.ContainsFunc(undo, func(c []string) bool { return slices.Equal(c, u) }) {
				t.Errorf("the shaping's undo lacks %v", u)
			}
		}
	}
	if _, err := ParseUndo(mustFormat(t, UndoFile("eth0"))); err != nil {
		t.Errorf("the dead-man switch refuses the undo file: %v", err)
	}
}

func mustFormat(t *testing.T, cmds [][]string) string {
	t.Helper()
	s, err := FormatUndo(cmds)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
