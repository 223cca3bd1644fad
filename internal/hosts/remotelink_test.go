package hosts

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/link"
)

func testLink(h Host) *RemoteLink {
	return &RemoteLink{Host: h, Target: ShapeTarget{Host: "client1", NIC: "eth0", Peer: netip.MustParseAddr("198.18.10.2")},
		Dir: "/tmp/wirelab-x", Agent: "/tmp/wirelab-x/wirelab", TTL: 30 * time.Second}
}

func indexOf(lines []string, prefix string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return i
		}
	}
	return -1
}

func TestRemoteLinkArmsBeforeShaping(t *testing.T) {
	h := newFakeHost()
	l := testLink(h)
	ctx := context.Background()
	if err := l.Shape(ctx, link.Condition{RateBps: 10_000_000}); err != nil {
		t.Fatal(err)
	}
	lines := h.lines()
	undo, start, apply := indexOf(lines, "copy /tmp/wirelab-x/deadman.undo 600"), indexOf(lines, "start deadman: /tmp/wirelab-x/wirelab agent deadman --ttl 30s"), indexOf(lines, "tc qdisc replace dev eth0 root")
	if undo < 0 || start < 0 || apply < 0 || !(undo < start && start < apply) {
		t.Fatalf("want the undo file, then the switch, then the shaping:\n%s", strings.Join(lines, "\n"))
	}
	if retire := indexOf(lines, "sh -c f=/run/wirelab-deadman-eth0.pid;"); retire < 0 || retire > start {
		t.Errorf("want an earlier switch of eth0 retired before the new one starts:\n%s", strings.Join(lines, "\n"))
	}
	if got := h.files["/run/wirelab-deadman-eth0.pid"]; got != "1001\n" {
		t.Errorf("pid file: %q", got)
	}
	if want, _ := FormatUndo(UndoFile("eth0")); h.files["/tmp/wirelab-x/deadman.undo"] != want {
		t.Errorf("undo file: %q, want %q", h.files["/tmp/wirelab-x/deadman.undo"], want)
	}
	// A second point re-shapes without a second switch.
	if err := l.Shape(ctx, link.Condition{RateBps: 5_000_000}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(strings.Join(h.lines(), "\n"), "start deadman"); n != 1 {
		t.Errorf("%d switches started, want 1", n)
	}
	if err := l.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	lines = h.lines()
	if stop, del := indexOf(lines, "stop deadman"), len(lines)-1; stop < 0 || lines[del] != "ip link del wlifb-eth0" || stop > del {
		t.Errorf("Clear: want the switch stopped, then the undo:\n%s", strings.Join(lines, "\n"))
	}
	if err := l.Clear(ctx); err != nil {
		t.Errorf("Clear twice: %v", err)
	}
}

func TestRemoteLinkUndoesAHalfShapedNIC(t *testing.T) {
	h := newFakeHost()
	h.Fail = map[string]error{"tc filter add dev eth0 parent 1:": errors.New("RTNETLINK answers: Invalid argument")}
	l := testLink(h)
	err := l.Shape(context.Background(), link.Condition{RateBps: 10_000_000})
	if err == nil || !strings.Contains(err.Error(), "host client1") {
		t.Fatalf("want the filter's error naming the host, got %v", err)
	}
	lines := h.lines()
	if lines[len(lines)-1] != "ip link del wlifb-eth0" {
		t.Errorf("a failed Shape must end with the undo:\n%s", strings.Join(lines, "\n"))
	}
}

// A dry run prints every command, the delay line's included: its delayer and rules start
// after the switch, and Clear stops the switch.
func TestDryHostPrintsEveryRemoteCommand(t *testing.T) {
	var b bytes.Buffer
	l := testLink(&DryHost{Host: "client1", W: &b})
	l.Target.NFQueue = true
	if err := l.Shape(context.Background(), link.Condition{RateBps: 10_000_000, Delay: 10 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := l.Clear(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	undo, _ := FormatUndo(UndoFile("eth0"))
	for _, w := range []string{
		"client1: copy " + strconv.Itoa(len(undo)) + " bytes to /tmp/wirelab-x/deadman.undo (mode 600)",
		"client1: start deadman: setsid -f /tmp/wirelab-x/wirelab agent deadman --ttl 30s",
		"--delayer-pid /run/wirelab-delayer-eth0.pid",
		"client1: tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dst 198.18.10.2/32 flowid 1:1",
		"client1: /tmp/wirelab-x/wirelab __delayer --detach --queue 100,101 --delay 10ms",
		"client1: iptables -t mangle -A WIRELAB-DELAY -d 198.18.10.2 -j NFQUEUE --queue-num 100",
		"client1: iptables -t mangle -I INPUT 1 -j WIRELAB-DELAY",
		"client1: stop deadman",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("dry run lacks %q:\n%s", w, out)
		}
	}
	if l.Shaper() != "htb+nfqueue" {
		t.Errorf("shaper %q after shaping delay without netem", l.Shaper())
	}
}
