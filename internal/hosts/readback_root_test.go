package hosts

import (
	"context"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/nstest"
)

// Two hosts of one machine (the pair's namespaces share /run) whose NICs have one name,
// eth0, each shaped toward the other under a switch of its own: shaping the second
// leaves the first's switch and shaping alone, each reads back as planned and counts
// the bytes sent to its peer, and a root qdisc deleted with tc from outside is read back
// as gone, naming the class, on that host only.
func TestSSHTwoHostsOfOneMachineKeepTheirOwnShaping(t *testing.T) {
	skipUnlessSSHRoot(t)
	agent := nstest.WirelabBinary(t)
	n := newSSHNet(t)
	ctx := context.Background()
	a, b := n.dial(t, "client1", addrA), n.dial(t, "server1", addrB)
	la := n.remoteLink(a, agent, 10*time.Second)
	lb := &RemoteLink{Host: b, Agent: agent, Dir: t.TempDir(), TTL: 10 * time.Second, Run: "r1",
		Target: ShapeTarget{Host: "server1", NIC: "eth0", Peer: netip.MustParseAddr(addrA), KeepPorts: []uint16{22}}}
	t.Cleanup(func() { _ = la.Clear(context.Background()); _ = lb.Clear(context.Background()) })
	c := link.Condition{RateBps: 20_000_000}
	if err := la.Shape(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := lb.Shape(ctx, c); err != nil {
		t.Fatal(err)
	}
	read := func(l *RemoteLink) link.Reading {
		t.Helper()
		r, err := l.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ra, rb := read(la), read(lb)
	if ra.Problems != nil || rb.Problems != nil || ra.Classes != 2 || rb.Classes != 2 {
		t.Fatalf("after shaping both: A %+v, B %+v; want both as planned, two classes each", ra, rb)
	}
	// 20 connection attempts from A to B: SYNs through A's class, RSTs through its IFB's.
	if out, err := a.Run(ctx, "bash", "-c", "for i in $(seq 20); do (echo > /dev/tcp/"+addrB+"/9) 2>/dev/null; done; true"); err != nil {
		t.Fatalf("probe: %v: %s", err, out)
	}
	if r := read(la); r.Bytes <= ra.Bytes {
		t.Errorf("A's classes counted %d bytes, then %d after 20 SYNs to B: want more", ra.Bytes, r.Bytes)
	}
	pa, err := ReadPlace(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := ReadPlace(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if !pa.SharesRun(pb) || pa.SharesNet(pb) {
		t.Errorf("places A %+v, B %+v: want one machine's /run, two network stacks", pa, pb)
	}
	mustRun(t, "ip", "netns", "exec", n.nsA, "tc", "qdisc", "del", "dev", "eth0", "root")
	want := []string{"its HTB class 1:1 on eth0 is gone (qdisc noqueue)"}
	if r := read(la); !reflect.DeepEqual(r.Problems, want) || r.Classes != 1 {
		t.Errorf("A after its root qdisc was deleted: %+v, want problems %q and the IFB's class alone", r, want)
	}
	if r := read(lb); r.Problems != nil {
		t.Errorf("B after A's root qdisc was deleted: %q", r.Problems)
	}
	for _, l := range []*RemoteLink{la, lb} {
		if err := l.Clear(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if shaped(t, n.nsA) || shaped(t, n.nsB) {
		t.Errorf("after Clear: A %q, B %q", qdiscs(t, n.nsA), qdiscs(t, n.nsB))
	}
}
