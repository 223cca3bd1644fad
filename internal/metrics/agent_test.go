package metrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// tcScript answers `tc ... class show dev DEV` with the next output of DEV's script; an
// output of "" means the device is gone.
type tcScript struct {
	t    *testing.T
	outs map[string][]string
}

func (s *tcScript) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	dev := args[len(args)-1]
	q := s.outs[dev]
	if name != "tc" || len(q) == 0 {
		s.t.Fatalf("unexpected call %s %q", name, args)
	}
	out := q[0]
	s.outs[dev] = q[1:]
	if out == "" {
		return nil, fmt.Errorf("tc %v: exit status 1: Cannot find device %q", args, dev)
	}
	return []byte(out), nil
}

func htbClass(id string, bytes, pkts uint64) string {
	return fmt.Sprintf("class htb %s root rate 20Mbit ceil 20Mbit burst 25000b cburst 25000b \n"+
		" Sent %d bytes %d pkt (dropped 0, overlimits 0 requeues 0) \n backlog 0b 0p requeues 0\n", id, bytes, pkts)
}

// The agent's wire totals never go back: a class that vanishes counts nothing, and one that
// comes back, or restarts from zero between two reads, counts from zero.
func TestAgentWireSurvivesClassChurn(t *testing.T) {
	p := newFakeProc(t)
	p.stat(1000)
	up := []string{
		htbClass("1:1", 5000, 50), // baseline
		htbClass("1:1", 7000, 70), // +2000
		"class mq 1:1 root \n",    // shaping removed: a multiqueue root's class, not ours
		htbClass("1:1", 300, 3),   // re-created: +300
		htbClass("1:1", 100, 1),   // re-created again between reads: +100
		htbClass("1:1", 1100, 11), // +1000
		htbClass("1:2", 9999, 99), // only another class: no new bytes
		htbClass("1:1", 1500, 15), // back, from zero: +1500
	}
	down := []string{"", "", htbClass("1:1", 800, 8), htbClass("1:1", 900, 9), "", htbClass("1:1", 50, 1), "", ""}
	run := &tcScript{t: t, outs: map[string][]string{"eth0": up, "wlifb-eth0": down}}
	a, err := NewAgent(AgentConfig{UpClass: TCClass{"eth0", ClassID{1, 1}}, DownClass: TCClass{"wlifb-eth0", ClassID{1, 1}},
		ProcRoot: p.root, Runner: run})
	if err != nil {
		t.Fatal(err)
	}
	wantUp := []uint64{0, 2000, 2000, 2300, 2400, 3400, 3400, 4900}
	wantDown := []uint64{0, 0, 800, 900, 900, 950, 950, 950}
	// Reads that found a class missing, both directions together, so far: down at lines 0,
	// 1, 4, 6, 7; up at 2 and 6.
	wantGone := []uint64{1, 2, 3, 3, 4, 4, 6, 7}
	var prev int64
	for i := range wantUp {
		l, err := a.Line(context.Background())
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if l.UpBytes != wantUp[i] || l.DownBytes != wantDown[i] || l.WireGone != wantGone[i] {
			t.Errorf("line %d: up %d down %d gone %d, want %d %d %d", i, l.UpBytes, l.DownBytes, l.WireGone, wantUp[i], wantDown[i], wantGone[i])
		}
		if l.UnixNano <= prev || l.MachineTicks != 1000 || l.ClkTck <= 0 {
			t.Errorf("line %d: %+v", i, l)
		}
		prev = l.UnixNano
	}
}

func TestAgentInterfacesAndProcesses(t *testing.T) {
	p := newFakeProc(t)
	p.stat(500)
	p.netDev(1000, 10, 5000, 50) // to-server TX 1000, to-client TX 5000 (RX is 1 each)
	comm := func(pid int, name string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(p.root, fmt.Sprint(pid)), 0o755); err != nil {
			t.Fatal(err)
		}
		p.replace(fmt.Sprintf("%d/comm", pid), name+"\n")
	}
	comm(10, "mariadbd")
	p.pid(10, 100, 50)
	comm(20, "sysbench")
	p.pid(20, 7, 3)
	a, err := NewAgent(AgentConfig{UpIface: "to-server", DownIface: "to-client", Comms: []string{"mariadbd"}, PIDs: []int{20}, ProcRoot: p.root})
	if err != nil {
		t.Fatal(err)
	}
	l0, err := a.Line(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if l0.UpBytes != 0 || l0.CPUTicks != 0 || l0.MachineTicks != 500 {
		t.Errorf("baseline %+v", l0)
	}
	p.replace("net/dev", "h\nh\nto-server: 9 2 0 0 0 0 0 0 4000 40 0 0 0 0 0 0\nto-client: 601 7 0 0 0 0 0 0 5000 50 0 0 0 0 0 0\n")
	p.pid(10, 150, 60) // +60
	comm(30, "mariadbd")
	p.pid(30, 5, 5) // started after the baseline: counts from its start, +10
	p.pid(20, 17, 3)
	l1, err := a.Line(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if l1.UpBytes != 3000 || l1.UpPkts != 30 || l1.DownBytes != 600 || l1.DownPkts != 6 {
		t.Errorf("wire: up is to-server's TX, down to-client's RX: %+v", l1)
	}
	if l1.CPUTicks != 80 {
		t.Errorf("cpu ticks %d, want 60+10+10", l1.CPUTicks)
	}
	if err := os.RemoveAll(filepath.Join(p.root, "30")); err != nil { // exited
		t.Fatal(err)
	}
	if l2, err := a.Line(context.Background()); err != nil || l2.CPUTicks != 80 {
		t.Errorf("after an exit: %+v %v, want the ticks kept", l2, err)
	}

	if _, err := NewAgent(AgentConfig{UpIface: "eth9", ProcRoot: p.root}); !errors.Is(err, ErrIfaceNotFound) {
		t.Errorf("missing interface: %v", err)
	}
	for _, cfg := range []AgentConfig{
		{UpIface: "to-server", UpClass: TCClass{"eth0", ClassID{1, 1}}},
		{Comms: []string{"a-name-longer-than-15"}},
		{PIDs: []int{0}},
	} {
		cfg.ProcRoot = p.root
		if _, err := NewAgent(cfg); err == nil {
			t.Errorf("NewAgent(%+v) succeeded", cfg)
		}
	}
}

func TestAgentLineRoundTrip(t *testing.T) {
	l := AgentLine{UnixNano: 1764000000123456789, UpBytes: 1 << 40, DownBytes: 2, UpPkts: 3, DownPkts: 4,
		CPUTicks: 5, MachineTicks: 6, ClkTck: 100}
	b, err := l.MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	if b[len(b)-1] != '\n' || bytes.Count(b, []byte{'\n'}) != 1 {
		t.Errorf("not one line: %q", b)
	}
	got, err := ParseAgentLine(string(b))
	if err != nil || got != l {
		t.Errorf("round trip: %+v %v, want %+v", got, err, l)
	}
	for _, bad := range []string{
		`{"unix_nano":1,"clk_tck":100,"extra":1}`, `{"unix_nano":1,"clk_tck":0}`, `{"unix_nano":0,"clk_tck":100}`,
		`{"unix_nano":1,"clk_tck":100} {}`, `{"unix_nano":1,"clk_tck":100,"up_bytes":-1}`, `not json`,
	} {
		if _, err := ParseAgentLine(bad); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
}

// A tree is its root and the children it has at each read: a postmaster's backends, which
// come with each connection, count from their start; another process does not count.
func TestAgentWatchesATree(t *testing.T) {
	p := newFakeProc(t)
	p.stat(500)
	proc := func(pid, ppid int, utime, stime uint64) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(p.root, fmt.Sprint(pid)), 0o755); err != nil {
			t.Fatal(err)
		}
		p.replace(fmt.Sprintf("%d/stat", pid), fmt.Sprintf(
			"%d (postgres) S %d %d %d 0 -1 0 0 0 0 0 %d %d 0 0 20 0 1 0 777 0 0", pid, ppid, pid, pid, utime, stime))
	}
	proc(100, 1, 10, 10)  // the postmaster
	proc(101, 100, 5, 5)  // its checkpointer
	proc(200, 1, 40, 40)  // another server's postmaster: not ours
	proc(201, 200, 40, 4) // and its child
	a, err := NewAgent(AgentConfig{Trees: []int{100}, ProcRoot: p.root})
	if err != nil {
		t.Fatal(err)
	}
	if l, err := a.Line(context.Background()); err != nil || l.CPUTicks != 0 {
		t.Fatalf("baseline %+v, %v", l, err)
	}
	proc(100, 1, 12, 10) // +2
	proc(101, 100, 6, 5) // +1
	proc(102, 100, 3, 4) // a backend since the baseline: +7
	proc(200, 1, 90, 90)
	proc(201, 200, 90, 9)
	l, err := a.Line(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if l.CPUTicks != 10 {
		t.Errorf("cpu ticks %d, want 2+1+7 of the postmaster's tree alone", l.CPUTicks)
	}
	if _, err := NewAgent(AgentConfig{Trees: []int{-1}, ProcRoot: p.root}); err == nil {
		t.Error("a tree rooted at pid -1 was accepted")
	}
}
