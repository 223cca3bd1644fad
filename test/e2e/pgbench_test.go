package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/postgres"
	"github.com/wirelab/wirelab/internal/result"

	"github.com/wirelab/wirelab/internal/nstest"
)

// TestPgbenchSelectOnlyIsRoundTripBound: `wirelab run --driver pgbench` with select-only,
// one statement and so one round trip per transaction, is bound by the round trip: 10
// clients across a 20 ms RTT make at most 10 / 0.020 s = 500 TPS.
//
// The bounds are 0.8× and 1.02× of 500. Above: the delayer never releases a packet early
// by more than its 0.1 ms wake-up margin per direction (10 / 0.0198 s = 505 TPS at most).
// Below: each transaction also spends the server's, pgbench's and the delayer's time (a
// fraction of a millisecond on an idle box: the README has the measured figure), and 0.8×
// leaves 5 ms per transaction for a busy machine.
func TestPgbenchSelectOnlyIsRoundTripBound(t *testing.T) {
	skipUnlessRoot(t)
	dir, err := postgres.FindBinDir()
	if err != nil {
		nstest.Unavailable(t, "%v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pgbench")); err != nil {
		nstest.Unavailable(t, "pgbench not installed (make deps)")
	}
	state, out := t.TempDir(), t.TempDir()
	stdout := wl(t, state, "run", "--engine", "postgres", "--driver", "pgbench", "--workload", "select-only",
		"--threads", "10", "--rtt", "20ms", "--duration", "10s", "--warmup", "2s", "--out", out)
	r, err := result.Read(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	assertGone(t, r.RunID)
	if len(r.Points) != 1 {
		t.Fatalf("%d points, want 1", len(r.Points))
	}
	p := r.Points[0]
	t.Logf("pgbench select-only, 10 clients, 20 ms RTT: %.1f TPS (%.3f of 500), latency %.2f ± %.2f ms, %s",
		p.TPS, p.TPS/500, p.LatAvgMs, p.LatStddevMs, p.Bottleneck)
	if p.Failed || p.Driver != "pgbench" || p.Workload != "select-only" || p.Threads != 10 {
		t.Fatalf("point %+v", p)
	}
	if p.TPS < 0.8*500 || p.TPS > 1.02*500 {
		t.Errorf("%.1f TPS, want 400..510: one round trip of 20 ms per transaction and client", p.TPS)
	}
	// The latency is pgbench's own, at least the round trip; QPS is one statement each.
	if p.LatAvgMs < 20 || p.QPS != p.TPS || p.Profile == nil || p.Profile.RoundTrips != 1 {
		t.Errorf("latency %.2f ms, QPS %.1f, profile %+v", p.LatAvgMs, p.QPS, p.Profile)
	}
	if n := len(p.Seconds); n < 10 || !p.Seconds[0].Warmup || p.Seconds[n-1].LatAvgMs == 0 {
		t.Errorf("per-second series %+v", p.Seconds)
	}
	if r.Environment.PgbenchVersion == "" || r.Spec.Scale != 10 || r.Spec.Driver != "pgbench" {
		t.Errorf("environment %+v, spec %+v", r.Environment, r.Spec)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil || !strings.Contains(string(md), "pgbench's select-only script over 10 clients") {
		t.Errorf("report.md does not describe the pgbench run (%v)", err)
	}
}
