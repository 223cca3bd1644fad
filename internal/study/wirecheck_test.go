package study

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

var rate20 = link.Condition{RateBps: 20_000_000}

func reading(name, host string, bytes, gone uint64, problems ...string) link.Reading {
	return link.Reading{Link: name, Host: host, Classes: 2, Bytes: bytes, Gone: gone, Problems: problems}
}

func TestShapingFaultIsOneRuleForEveryLink(t *testing.T) {
	c1, c2 := "client c1", "client c2"
	before := []link.Reading{reading(c1, lab.Client, 1000, 0), reading(c2, ClientRole(1), 1000, 0)}
	both := map[string]float64{lab.Client: 1296, ClientRole(1): 47}
	for _, tc := range []struct {
		name  string
		after []link.Reading
		drove map[string]float64
		want  string
	}{
		{"both links as shaped, both counted", []link.Reading{reading(c1, lab.Client, 9000, 0), reading(c2, ClientRole(1), 5000, 0)}, both, ""},
		{"c1's class gone", []link.Reading{reading(c1, lab.Client, 0, 0, "its HTB class 1:1 on eth0 is gone (qdisc noqueue)"), reading(c2, ClientRole(1), 5000, 0)}, both,
			"client c1: its HTB class 1:1 on eth0 is gone (qdisc noqueue); the 1296 TPS it ran were not measured on the link asked (rate 20mbit)"},
		{"c1's agent found its class missing", []link.Reading{reading(c1, lab.Client, 9000, 3), reading(c2, ClientRole(1), 5000, 0)}, both,
			"client c1: its sample agent found its shaped classes missing in 3 reads during the point; the 1296 TPS it ran were not measured on the link asked (rate 20mbit)"},
		{"c2's classes made anew", []link.Reading{reading(c1, lab.Client, 9000, 0), reading(c2, ClientRole(1), 200, 0)}, both,
			"client c2: its shaped classes were made anew during the point (their counters went back from 1000 to 200 bytes); the 47 TPS it ran were not measured on the link asked (rate 20mbit)"},
		{"c1 drove transactions its classes did not count", []link.Reading{reading(c1, lab.Client, 1000, 0), reading(c2, ClientRole(1), 5000, 0)}, both,
			"client c1: its shaped classes counted no byte while it ran 1296 TPS: the traffic went around the link asked (rate 20mbit)"},
		// A load that does not cross the link (transport's socket rows, run beside the
		// server) owes its classes no byte.
		{"load beside the server", []link.Reading{reading(c1, lab.Client, 1000, 0)}, map[string]float64{lab.Server: 2000}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := shapingFault(before, tc.after, tc.drove, 1343, rate20); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// shapingBackend reads back the readings queued in reads, one list per call, and counts
// the Shapes.
type shapingBackend struct {
	Backend
	reads  [][]link.Reading
	err    error
	shapes int
}

func (b *shapingBackend) ReadShaping(context.Context) ([]link.Reading, error) {
	if b.err != nil {
		return nil, b.err
	}
	r := b.reads[0]
	b.reads = b.reads[1:]
	return r, nil
}

func (b *shapingBackend) Shape(context.Context, link.Condition) error { b.shapes++; return nil }
func (b *shapingBackend) Wire() WireState                             { return WireState{ReadBack: "shaped again"} }

func TestWireBeforeShapesAChangedWireAgainAndSaysSo(t *testing.T) {
	gone := reading("client c1", lab.Client, 0, 0, "its HTB class 1:1 on eth0 is gone (qdisc noqueue)")
	ok := reading("client c1", lab.Client, 0, 0)
	newEnv := func(b Backend) *Env {
		return &Env{Backend: b, Cond: rate20, Run: &result.Run{}, Logger: slog.New(slog.DiscardHandler)}
	}
	b := &shapingBackend{reads: [][]link.Reading{{ok}}}
	if rs, err := newEnv(b).wireBefore(context.Background(), 1); err != nil || len(rs) != 1 || b.shapes != 0 {
		t.Errorf("as shaped: %v, %v, %d shapes", rs, err, b.shapes)
	}
	b = &shapingBackend{reads: [][]link.Reading{{gone}, {ok}}}
	e := newEnv(b)
	if _, err := e.wireBefore(context.Background(), 2); err != nil || b.shapes != 1 {
		t.Fatalf("changed: %v, %d shapes", err, b.shapes)
	}
	if len(e.Run.Notes) != 1 || !strings.Contains(e.Run.Notes[0], "Before point 2 the wire was not as shaped (client c1: its HTB class 1:1 on eth0 is gone (qdisc noqueue))") ||
		e.Run.Environment.LinkAsReadBack != "shaped again" {
		t.Errorf("notes %q, read-back %q", e.Run.Notes, e.Run.Environment.LinkAsReadBack)
	}
	b = &shapingBackend{reads: [][]link.Reading{{gone}, {gone}}}
	if _, err := newEnv(b).wireBefore(context.Background(), 3); err == nil || !strings.Contains(err.Error(), "even after shaping it again") || !strings.Contains(err.Error(), "client c1") {
		t.Errorf("a wire that cannot be kept: %v", err)
	}
}

func TestWireAfterFailsThePointNamingTheLink(t *testing.T) {
	before := []link.Reading{reading("client c1", lab.Client, 100, 0)}
	e := &Env{Backend: &shapingBackend{reads: [][]link.Reading{{reading("client c1", lab.Client, 0, 0, "its HTB class 1:1 on eth0 is gone (qdisc noqueue)")}}},
		Cond: rate20, Logger: slog.New(slog.DiscardHandler), drove: map[string]float64{lab.Client: 1296}}
	p := result.Point{TPS: 1296}
	e.wireAfter(context.Background(), before, &p)
	if !p.Failed || p.FailReason != "client c1: its HTB class 1:1 on eth0 is gone (qdisc noqueue); the 1296 TPS it ran were not measured on the link asked (rate 20mbit)" {
		t.Errorf("failed %v: %q", p.Failed, p.FailReason)
	}
	// A point that failed already keeps its own reason first; a read that fails fails it.
	e = &Env{Backend: &shapingBackend{err: errors.New("connection lost")}, Cond: rate20, Logger: slog.New(slog.DiscardHandler)}
	p = result.Point{Failed: true, FailReason: "sysbench exited 1"}
	e.wireAfter(context.Background(), before, &p)
	if !strings.HasPrefix(p.FailReason, "sysbench exited 1; the wire could not be read back after the point (connection lost)") {
		t.Errorf("%q", p.FailReason)
	}
}

// wireRunner answers the lab's tc read-back in its wire namespace from captures of real
// tc output; a device without captures is gone.
type wireRunner map[string][2]string

func (r wireRunner) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	cmd := strings.Join(append([]string{name}, args...), " ")
	dev := args[len(args)-1]
	files, ok := r[dev]
	if !ok {
		return nil, fmt.Errorf("%s: exit status 1: Cannot find device %q", cmd, dev)
	}
	f := files[0]
	if strings.Contains(cmd, " class show ") {
		f = files[1]
	}
	return os.ReadFile("../link/testdata/" + f)
}

func TestLabReadsItsWireBackAgainstWhatItsShaperMade(t *testing.T) {
	nic := [2]string{"tc_qdisc_shaped_nic_iproute2-6.1.txt", "tc_class_shaped_nic_iproute2-6.1.txt"}
	cleared := [2]string{"tc_qdisc_cleared_veth_iproute2-6.1.txt", "tc_class_cleared_veth_iproute2-6.1.txt"}
	st := &lab.State{RunID: "abc", Namespaces: map[string]string{lab.Wire: "wl-abc-wire"},
		ReadBack: "w-server: qdisc htb 1: root refcnt 3 r2q 10 default 0 direct_packets_stat 1 direct_qlen 1000\n" +
			"w-server: qdisc pfifo 10: parent 1:1 limit 100p\n" +
			"w-server: class htb 1:1 root leaf 10: prio 0 rate 20Mbit ceil 20Mbit burst 25000b cburst 25000b\n" +
			"w-client: qdisc htb 1: root refcnt 3 r2q 10 default 0 direct_packets_stat 1 direct_qlen 1000\n" +
			"w-client: class htb 1:1 root leaf 10: prio 0 rate 20Mbit ceil 20Mbit burst 25000b cburst 25000b"}
	for _, tc := range []struct {
		name     string
		run      wireRunner
		problems string
		bytes    uint64
	}{
		{"as shaped", wireRunner{"w-server": nic, "w-client": nic}, "", 9800},
		{"one side cleared", wireRunner{"w-server": nic, "w-client": cleared}, "the wire: its HTB class 1:1 on w-client is gone (qdisc noqueue)", 4900},
		{"one side gone", wireRunner{"w-server": nic}, "the wire: device w-client is gone", 4900},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &labBackend{l: lab.Attach(st, lab.Options{Runner: tc.run}), hosts: []string{lab.Client, lab.Server}}
			rs, err := b.ReadShaping(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 1 || rs[0].Host != lab.Client || problemsOf(rs) != tc.problems || rs[0].Bytes != tc.bytes {
				t.Errorf("%+v: want problems %q, %d bytes", rs, tc.problems, tc.bytes)
			}
		})
	}
}
