package remote

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/hosts"
	"github.com/wirelab/wirelab/internal/inventory"
	"github.com/wirelab/wirelab/internal/link"
)

// A client whose link was last shaped by the delay line has its stats read on the client,
// named by the client; a client shaped by netem, or one whose delay line ended, has none.
func TestDelayLinesReadTheClientsStats(t *testing.T) {
	ctx := context.Background()
	b := &Backend{}
	for i, name := range []string{"c1", "c2"} {
		f := newFakeHost()
		tg := hosts.ShapeTarget{Host: name, NIC: "eth1", Peer: netip.MustParseAddr("198.18.21.2"), NFQueue: i == 0, Netem: i == 1}
		l := &hosts.RemoteLink{Host: f, Target: tg, Dir: "/tmp/wirelab-" + name, Agent: "/tmp/wirelab-" + name + "/wirelab", Run: "r1"}
		if err := l.Shape(ctx, link.Condition{Delay: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		f.set(hosts.DelayerStatsFile(l.Dir), `{"pid": 77, "cpu_ns": 1500000, "queues": [{"queue": 100, "received": 40}]}`)
		b.clients = append(b.clients, &host{inv: inventory.Host{Name: name}, h: f})
		b.links = append(b.links, l)
		b.targets = append(b.targets, tg)
	}
	lines := b.DelayLines()
	if len(lines) != 1 || lines[0].Host != "c1" {
		t.Fatalf("delay lines %+v, want c1's alone (c2 shapes with netem)", lines)
	}
	st, err := lines[0].Read(ctx)
	if err != nil || st.Pid != 77 || st.CPUNs != 1_500_000 || st.Packets() != 40 {
		t.Errorf("c1's stats %+v, %v", st, err)
	}
	b.clients[0].h.(*fakeHost).remove(hosts.DelayerStatsFile(b.links[0].Dir))
	if _, err := lines[0].Read(ctx); err == nil {
		t.Error("a missing stats file read without an error")
	}
}
