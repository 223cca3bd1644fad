package replication

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	if _, err := exec.LookPath("mariadbd"); err != nil {
		if _, err := os.Stat("/usr/sbin/mariadbd"); err != nil {
			nstest.Unavailable(t, "mariadbd not installed")
		}
	}
}

// wirelabBinary is $WIRELAB_BIN, or a wirelab built for the test (the tunnel ends run as
// `wirelab tunnel entry|exit` inside the lab hosts).
func wirelabBinary(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("WIRELAB_BIN"); b != "" {
		return b
	}
	bin := filepath.Join(t.TempDir(), "wirelab")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/wirelab")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build wirelab: %v\n%s", err, out)
	}
	return bin
}

// TestFaultWireDropHeals drops the replica's link (every packet, both ways) for 3 s in
// the middle of a write load on each channel: replication must resume by itself — no
// STOP/START SLAVE from us — and the replica must end identical to the source.
func TestFaultWireDropHeals(t *testing.T) {
	skipUnlessRoot(t)
	self := wirelabBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	o := Options{Channels: Channels, Scenarios: []int{4}, Link: link.Condition{RateBps: 2_000_000}, LagQPS: 300,
		Duration: 15 * time.Second, AbortLag: 0, CatchUpTimeout: 2 * time.Minute, Tables: 2, TableSize: 1000,
		Threads: 2, RandType: "uniform", BufferPool: "128M", Tunnel: lab.TunnelOptions{Knobs: tunnel.Knobs{Compress: tunnel.Zstd}}, Rule: DefaultRule,
		Fault: Fault{At: 4 * time.Second, For: 3 * time.Second}, SearchFactor: 2, Precision: 0.05}
	s := &study.Session{Logger: log, StateDir: t.TempDir(), Self: self, Progress: testWriter{t}, OutDir: t.TempDir()}
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

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
