package link

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
)

func testWire(t *testing.T) Wire {
	t.Helper()
	return Wire{NS: "wl-t-wire", Ifaces: []string{"to-client", "to-server"}, StateDir: t.TempDir(), Self: "/usr/bin/wirelab"}
}

// tcLines keeps the calls that change or read the wire, dropping detection.
func without(lines []string, prefixes ...string) []string {
	var out []string
	for _, l := range lines {
		keep := true
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				keep = false
			}
		}
		if keep {
			out = append(out, l)
		}
	}
	return out
}

func TestHTBBurst(t *testing.T) {
	cases := []struct {
		rate int64
		want int
	}{
		{1_000_000, burstFloor},    // 500 B: the floor
		{2_000_000, burstFloor},    // 2500 B < 3028
		{50_000_000, 62_500},       // 6250 B/ms × 10 ms
		{1_000_000_000, 1_250_000}, // 125 kB/ms × 10 ms
		{10_000_000_000, 12_500_000},
	}
	for _, c := range cases {
		if got := HTBBurst(c.rate); got != c.want {
			t.Errorf("HTBBurst(%s) = %d, want %d", FormatRate(c.rate), got, c.want)
		}
	}
	if got := HTBLeafLimit(1_000_000, 0); got != 100 {
		t.Errorf("leaf limit at 1mbit = %d, want the floor 100", got)
	}
	// 1 Gbit/s, 2 × RTT 100 ms + 60 ms: 125e6 * 0.26 / 1514 = 21467 packets.
	if got := HTBLeafLimit(1_000_000_000, 50*time.Millisecond); got != 21467 {
		t.Errorf("leaf limit at 1gbit/50ms = %d, want 21467", got)
	}
	// 50 Mbit/s, RTT 40 ms: 6.25e6 * 0.14 / 1514 = 578.
	if got := HTBLeafLimit(50_000_000, 20*time.Millisecond); got != 578 {
		t.Errorf("leaf limit at 50mbit/20ms = %d, want 578", got)
	}
	// No delay: 60 ms of traffic, not 20 (22% drops at 50 Mbit/s with 20).
	if got := HTBLeafLimit(50_000_000, 0); got != 248 {
		t.Errorf("leaf limit at 50mbit = %d, want 248", got)
	}
	if got := HTBLeafLimit(1_000_000_000, 5*time.Second); got != 100_000 {
		t.Errorf("leaf limit at 1gbit/5s = %d, want the cap 100000", got)
	}
}

func TestApplyRateOnlyPlansHTB(t *testing.T) {
	f := &execx.Fake{}
	w := testWire(t)
	a, err := Apply(context.Background(), f, w, Condition{RateBps: 50_000_000}, "")
	if err != nil {
		t.Fatal(err)
	}
	if a.Shaper != "htb" {
		t.Errorf("shaper %q, want htb", a.Shaper)
	}
	got := without(f.Lines(), "ip netns exec wl-t-wire tc qdisc del", "ip netns exec wl-t-wire iptables -t mangle -D",
		"ip netns exec wl-t-wire iptables -t mangle -F", "ip netns exec wl-t-wire iptables -t mangle -X", "ip netns pids",
		"ip netns exec wl-t-wire tc qdisc show", "ip netns exec wl-t-wire tc class show")
	want := []string{
		"ip netns exec wl-t-wire ethtool -K to-client tso off gso off gro off",
		"ip netns exec wl-t-wire ethtool -K to-server tso off gso off gro off",
		"ip netns exec wl-t-wire tc qdisc replace dev to-client root handle 1: htb default 1",
		"ip netns exec wl-t-wire tc class replace dev to-client parent 1: classid 1:1 htb rate 50000000bit ceil 50000000bit burst 62500b cburst 62500b quantum 200000",
		"ip netns exec wl-t-wire tc qdisc replace dev to-client parent 1:1 handle 10: pfifo limit 248",
		"ip netns exec wl-t-wire tc qdisc replace dev to-server root handle 1: htb default 1",
		"ip netns exec wl-t-wire tc class replace dev to-server parent 1: classid 1:1 htb rate 50000000bit ceil 50000000bit burst 62500b cburst 62500b quantum 200000",
		"ip netns exec wl-t-wire tc qdisc replace dev to-server parent 1:1 handle 10: pfifo limit 248",
	}
	if !slices.Equal(got, want) {
		t.Errorf("plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// noNetem makes the fake kernel refuse netem, like this development machine.
func noNetem() *execx.Fake {
	return &execx.Fake{Errors: map[string]error{}, Responses: map[string]string{
		"ip netns exec wl-t-wire " + "/usr/bin/wirelab __delayer": "pid 4242\n",
	}}
}

func TestApplyNetemRefusedBeforeAnyChange(t *testing.T) {
	f := noNetem()
	r := &netemless{Fake: f} // detection (in wld-<random>) sees every netem attempt fail
	_, err := Apply(context.Background(), r, testWire(t), Condition{Delay: 10 * time.Millisecond}, ShaperNetem)
	if !errors.Is(err, ErrNoNetem) || !strings.Contains(err.Error(), "--shaper") {
		t.Fatalf("err = %v, want ErrNoNetem naming --shaper", err)
	}
	for _, l := range f.Lines() {
		if strings.Contains(l, "wl-t-wire") {
			t.Errorf("wire touched before refusing: %s", l)
		}
	}
}

// netemless is a Fake whose kernel has no sch_netem.
type netemless struct{ *execx.Fake }

func (n *netemless) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	out, err := n.Fake.Run(ctx, name, args...)
	if slices.Contains(args, "netem") && slices.Contains(args, "qdisc") {
		return nil, errors.New("Error: Specified qdisc kind is unknown.")
	}
	return out, err
}

func TestApplyAutoWithoutNetemUsesDelayer(t *testing.T) {
	f := noNetem()
	w := testWire(t)
	c := Condition{RateBps: 20_000_000, Delay: 20 * time.Millisecond, Jitter: time.Millisecond, LossPct: 0.5}
	a, err := Apply(context.Background(), &netemless{Fake: f}, w, c, "")
	if err != nil {
		t.Fatal(err)
	}
	if a.Shaper != "htb+nfqueue" || a.DelayerPid != 4242 {
		t.Errorf("applied %+v, want htb+nfqueue with pid 4242", a)
	}
	lines := f.Lines()
	idx := func(sub string) int {
		for i, l := range lines {
			if strings.Contains(l, sub) {
				return i
			}
		}
		t.Fatalf("no call containing %q in:\n%s", sub, strings.Join(lines, "\n"))
		return -1
	}
	pid, log, stats := DelayerFiles(w)
	start := idx("/usr/bin/wirelab __delayer --detach --queue 100,101 --delay 20ms --jitter 1ms --loss 0.5 --max-queue 1024 --seed 1 --pid-file " +
		pid + " --log-file " + log + " --stats-file " + stats)
	htb := idx("tc class replace dev to-server parent 1: classid 1:1 htb rate 20000000bit")
	rule0 := idx("iptables -t mangle -A WIRELAB-DELAY -o to-client -j NFQUEUE --queue-num 100")
	idx("iptables -t mangle -A WIRELAB-DELAY -o to-server -j NFQUEUE --queue-num 101")
	jump := idx("iptables -t mangle -I FORWARD 1 -j WIRELAB-DELAY")
	if !(htb < start && start < rule0 && rule0 < jump) {
		t.Errorf("order: htb %d, delayer %d, rules %d, jump %d; want the delayer bound before any packet is queued", htb, start, rule0, jump)
	}
	for _, l := range lines {
		if strings.Contains(l, "queue-bypass") || strings.Contains(l, "netem delay") && strings.Contains(l, "wl-t-wire") {
			t.Errorf("unexpected call %q: the wire must fail closed and not use netem", l)
		}
	}
}

func TestApplyNetemPlan(t *testing.T) {
	f := &execx.Fake{}
	w := testWire(t)
	w.Ifaces = w.Ifaces[:1]
	c := Condition{RateBps: 100_000_000, Delay: 50 * time.Millisecond, Jitter: 2 * time.Millisecond, LossPct: 0.1}
	a, err := Apply(context.Background(), f, w, c, ShaperNetem)
	if err != nil {
		t.Fatal(err)
	}
	if a.Shaper != "htb+netem" {
		t.Errorf("shaper %q, want htb+netem", a.Shaper)
	}
	got := without(f.Lines(), "ip netns add", "ip netns del", "ip -n", "ip netns exec wld-", "ip netns pids",
		"ip netns exec wl-t-wire iptables", "ip netns exec wl-t-wire tc qdisc del", "ip netns exec wl-t-wire ethtool",
		"ip netns exec wl-t-wire tc qdisc show", "ip netns exec wl-t-wire tc class show")
	want := []string{
		// limit: 100 Mbit/s of 512-byte packets for 52 ms, +25%, +128 = 1715
		"ip netns exec wl-t-wire tc qdisc replace dev to-client root handle 1: netem limit 1715 delay 50000us 2000us loss random 0.1%",
		"ip netns exec wl-t-wire tc qdisc replace dev to-client parent 1:1 handle 2: htb default 1",
		"ip netns exec wl-t-wire tc class replace dev to-client parent 2: classid 2:1 htb rate 100000000bit ceil 100000000bit burst 125000b cburst 125000b quantum 200000",
		"ip netns exec wl-t-wire tc qdisc replace dev to-client parent 2:1 handle 20: pfifo limit 2147",
	}
	if !slices.Equal(got, want) {
		t.Errorf("plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestClearIsIdempotentOnABareWire(t *testing.T) {
	// What a wire with nothing on it answers (captured from iproute2 6.x / iptables-nft 1.8.9).
	f := &execx.Fake{Errors: map[string]error{
		"ip netns exec wl-t-wire tc qdisc del":          errors.New("exit status 2: Error: Cannot delete qdisc with handle of zero."),
		"ip netns exec wl-t-wire iptables -t mangle -D": errors.New("exit status 2: iptables v1.8.9 (nf_tables): Chain 'WIRELAB-DELAY' does not exist"),
		"ip netns exec wl-t-wire iptables -t mangle -F": errors.New("exit status 1: iptables: No chain/target/match by that name."),
		"ip netns exec wl-t-wire iptables -t mangle -X": errors.New("exit status 1: iptables: No chain/target/match by that name."),
		"ip netns pids wl-t-wire":                       errors.New("Cannot open network namespace: No such file or directory"),
	}}
	w := testWire(t)
	for i := range 2 {
		if err := Clear(context.Background(), f, w); err != nil {
			t.Fatalf("clear #%d: %v", i+1, err)
		}
	}
	f.Errors["ip netns exec wl-t-wire tc qdisc del"] = errors.New("exit status 2: RTNETLINK answers: Operation not permitted")
	if err := Clear(context.Background(), f, w); err == nil || !strings.Contains(err.Error(), "Operation not permitted") {
		t.Errorf("a real failure was swallowed: %v", err)
	}
}

func TestApplyClearsWhenSetupFails(t *testing.T) {
	f := noNetem()
	f.Errors["ip netns exec wl-t-wire iptables -t mangle -I FORWARD"] = errors.New("iptables: boom")
	_, err := Apply(context.Background(), &netemless{Fake: f}, testWire(t), Condition{Delay: time.Millisecond}, ShaperNfqueue)
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err = %v, want the iptables failure", err)
	}
	lines := f.Lines()
	last := lines[len(lines)-1]
	if !strings.Contains(strings.Join(lines[len(lines)-8:], "\n"), "iptables -t mangle -X WIRELAB-DELAY") {
		t.Errorf("no teardown after the failure; last call %q", last)
	}
}

func TestApplyRejectsBadInput(t *testing.T) {
	f := &execx.Fake{}
	for _, c := range []struct {
		c      Condition
		shaper Shaper
		want   error
	}{
		{Condition{Delay: 11 * time.Second}, "", ErrBadFlag},
		{Condition{Delay: time.Millisecond, Jitter: 2 * time.Millisecond}, "", ErrBadFlag},
		{Condition{LossPct: 101}, "", ErrBadFlag},
		{Condition{Delay: time.Millisecond}, "tbf", ErrBadShaper},
	} {
		if _, err := Apply(context.Background(), f, testWire(t), c.c, c.shaper); !errors.Is(err, c.want) {
			t.Errorf("Apply(%+v, %q) = %v, want %v", c.c, c.shaper, err, c.want)
		}
	}
	if len(f.Calls) != 0 {
		t.Errorf("bad input ran commands: %v", f.Lines())
	}
}

func TestDetect(t *testing.T) {
	f := &execx.Fake{}
	caps, err := Detect(context.Background(), &netemless{Fake: f})
	if err != nil {
		t.Fatal(err)
	}
	if caps.Netem || !caps.HTB || !caps.NFQueue {
		t.Errorf("caps %+v, want no netem, htb, nfqueue", caps)
	}
	lines := f.Lines()
	if !strings.HasPrefix(lines[0], "ip netns add wld-") || !strings.HasPrefix(lines[len(lines)-1], "ip netns del wld-") {
		t.Errorf("detection must create and always delete its own namespace: %v", lines)
	}
}
