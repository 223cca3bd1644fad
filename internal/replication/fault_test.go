package replication

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/study"
	"github.com/wirelab/wirelab/internal/tunnel"

	"github.com/wirelab/wirelab/internal/nstest"
)

func skipUnlessRoot(t *testing.T) {
	t.Helper()
	nstest.SkipUnlessRoot(t, "sysbench", "iptables", "ip")
	nstest.NeedMariaDB(t)
}

// TestFaultWireDropHeals drops the replica's link (every packet, both ways) for 3 s in
// the middle of a write load on each channel: replication must resume by itself — no
// STOP/START SLAVE from us — and the replica must end identical to the source.
func TestFaultWireDropHeals(t *testing.T) {
	skipUnlessRoot(t)
	self := nstest.Wirelab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	o := Options{Channels: Channels, Scenarios: []int{4}, Link: link.Condition{RateBps: 2_000_000}, LagQPS: 300,
		Duration: 15 * time.Second, AbortLag: 0, CatchUpTimeout: 2 * time.Minute, Tables: 2, TableSize: 1000,
		Threads: 2, RandType: "uniform", BufferPool: "128M", Tunnel: lab.TunnelOptions{Knobs: tunnel.Knobs{Compress: tunnel.Zstd}}, Rule: DefaultRule,
		Fault: Fault{At: 4 * time.Second, For: 3 * time.Second}, SearchFactor: 2, Precision: 0.05}
	s := &study.Session{Logger: log, StateDir: t.TempDir(), Self: self, Progress: nstest.Log(t), OutDir: t.TempDir()}
	run, err := s.Run(ctx, ctx, New(o))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(run.Points) != len(Channels) {
		t.Fatalf("%d points, want one per channel (%d)", len(run.Points), len(Channels))
	}
	for _, p := range run.Points {
		if !p.Usable() {
			t.Errorf("%s: failed=%v checksum_ok=%v: %s", p.Channel, p.Failed, p.Replication.ChecksumOK, p.FailReason)
			continue
		}
		// The drop must have been visible: lag grew past the outage while the wire was down.
		if p.Replication.LagMaxS < 2 {
			t.Errorf("%s: highest lag %.2f s; the 3 s drop did not show", p.Channel, p.Replication.LagMaxS)
		}
		t.Logf("%s: lag max %.2f s, catch-up %.1f s, checksum ok", p.Channel, p.Replication.LagMaxS, p.Replication.CatchUpS)
	}
}
