package study

import (
	"context"
	"log/slog"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/nstest"
)

// A real lab's wire reads back as its shaper made it, with each shaper; traffic across it
// is counted by its shaped classes; a root qdisc deleted with tc from outside is read
// back as gone, and the Session's rule then fails a point that drove transactions.
func TestLabWireReadsBackAsShaped(t *testing.T) {
	nstest.SkipUnlessRoot(t, "ip", "tc", "iptables")
	self := nstest.Wirelab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := lab.Up(ctx, lab.Options{Hosts: []string{lab.Client, lab.Server}, StateDir: t.TempDir(), Self: self,
		Logger: nstest.Logger(t, slog.LevelWarn)})
	if err != nil {
		t.Fatalf("lab up: %v", err)
	}
	t.Cleanup(func() {
		if err := l.Down(context.Background()); err != nil {
			t.Errorf("lab down: %v", err)
		}
	})
	b := LabBackend(l, self, lab.Client, lab.Server)
	for _, c := range []link.Condition{{RateBps: 20_000_000}, {RateBps: 20_000_000, Delay: 2 * time.Millisecond}, {}} {
		if err := l.Shape(ctx, c, "", self); err != nil {
			t.Fatalf("shape %s: %v", c, err)
		}
		before, err := b.ReadShaping(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if p := problemsOf(before); p != "" || len(before) != 1 || (before[0].Classes == 0) != c.Unlimited() {
			t.Fatalf("%s (%s) as shaped: %+v\nread-back when shaped:\n%s", c, l.State.Shaper, before, l.State.ReadBack)
		}
		if out, err := l.Exec(ctx, lab.Client, "bash", "-c", "for i in $(seq 20); do (echo > /dev/tcp/"+lab.HostAddr[lab.Server]+"/9) 2>/dev/null; done; true"); err != nil {
			t.Fatalf("probe: %v: %s", err, out)
		}
		after, err := b.ReadShaping(ctx)
		if err != nil {
			t.Fatal(err)
		}
		drove := map[string]float64{lab.Client: 100}
		if f := shapingFault(before, after, drove, 100, c); f != "" || (!c.Unlimited() && after[0].Bytes <= before[0].Bytes) {
			t.Errorf("%s: 20 SYNs across the wire: %q, bytes %d → %d", c, f, before[0].Bytes, after[0].Bytes)
		}
	}
	if err := l.Shape(ctx, link.Condition{RateBps: 20_000_000}, "", self); err != nil {
		t.Fatal(err)
	}
	before, _ := b.ReadShaping(ctx)
	dev := l.State.WireIfaces[lab.Client]
	if out, err := exec.Command("ip", "netns", "exec", l.State.NS(lab.Wire), "tc", "qdisc", "del", "dev", dev, "root").CombinedOutput(); err != nil {
		t.Fatalf("tc qdisc del: %v: %s", err, out)
	}
	after, err := b.ReadShaping(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f := shapingFault(before, after, map[string]float64{lab.Client: 100}, 100, link.Condition{RateBps: 20_000_000})
	if !strings.HasPrefix(f, "the wire: its HTB class 1:1 on "+dev+" is gone (qdisc noqueue)") {
		t.Errorf("after tc qdisc del dev %s root: %q", dev, f)
	}
}
