package hosts

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/link"
)

func testLink(h Host) *RemoteLink {
	return &RemoteLink{Host: h, Target: ShapeTarget{Host: "client1", NIC: "eth0", Peer: netip.MustParseAddr("198.18.10.2")},
		Dir: "/tmp/wirelab-x", Agent: "/tmp/wirelab-x/wirelab", TTL: 30 * time.Second, Run: "h1"}
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
	retire := indexOf(lines, "sh -c for f in \"$1\"/*.pid;")
	if retire < 0 || retire > start || !strings.HasSuffix(lines[retire], " sh /run/wirelab-deadman/client1@eth0") {
		t.Errorf("want earlier switches of client1's eth0 retired before the new one starts:\n%s", strings.Join(lines, "\n"))
	}
	if got := h.files["/run/wirelab-deadman/client1@eth0/h1.pid"]; got != "1001\n" {
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

// A switch's pid file is its host's and run's: two hosts of one machine (sharing /run)
// with NICs of one name keep theirs apart, and a switch of an earlier run on the same host
// and NIC that is still running is retired with a warning naming it.
func TestRemoteLinkSwitchBelongsToItsHostAndRun(t *testing.T) {
	h := newFakeHost()
	h.Answer = map[string]string{"sh -c for f in": "4242 /run/wirelab-deadman/client1@eth0/h0.pid\n"}
	var logBuf bytes.Buffer
	l := testLink(h)
	l.Log = slog.New(slog.NewTextHandler(&logBuf, nil))
	if err := l.Shape(context.Background(), link.Condition{RateBps: 10_000_000}); err != nil {
		t.Fatal(err)
	}
	log := logBuf.String()
	if !strings.Contains(log, "level=WARN") || !strings.Contains(log, "pid 4242 (/run/wirelab-deadman/client1@eth0/h0.pid)") || !strings.Contains(log, "host=client1") {
		t.Errorf("retiring a live switch must warn, naming it: %s", log)
	}
	if a, b := switchPidFile("c1", "eth0", "h1"), switchPidFile("c2", "eth0", "h1"); a == b || switchDir("c1", "eth0") == switchDir("c2", "eth0") {
		t.Errorf("two hosts' switches of eth0 share %s", a)
	}
	if a, b := switchPidFile("c1", "eth0", "h1"), switchPidFile("c1", "eth0", "h2"); a == b {
		t.Errorf("two runs' switches share %s", a)
	}
	if err := l.Clear(context.Background()); err != nil {
		t.Fatal(err)
	}
	if i := indexOf(h.lines(), "sh -c rm -f \"$1\"; rmdir"); i < 0 || !strings.Contains(h.lines()[i], "/run/wirelab-deadman/client1@eth0/h1.pid") {
		t.Errorf("Clear must remove this run's pid file:\n%s", strings.Join(h.lines(), "\n"))
	}
	nl := testLink(newFakeHost())
	nl.Run = ""
	if err := nl.Shape(context.Background(), link.Condition{RateBps: 1}); err == nil || !strings.Contains(err.Error(), "no run id") {
		t.Errorf("a link without a run id: %v", err)
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
