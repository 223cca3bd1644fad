package e2e

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/result"
)

// sysbenchData is the small sysbench data set the sysbench sweeps run on.
var sysbenchData = []string{"--tables", "1", "--table-size", "1000"}

// syncSweep runs a mini `study sync` (args name the engine, modes, RTTs and the data set)
// and returns its results.
func syncSweep(t *testing.T, args ...string) (*result.Run, string) {
	t.Helper()
	state, out := t.TempDir(), t.TempDir()
	args = append([]string{"study", "sync", "--threads", "1", "--duration", "3s", "--warmup", "1s",
		"--check-wire=false", "--out", out}, args...)
	wl(t, state, args...)
	if id := labRunID(t, state); id != "" {
		t.Errorf("lab %s still recorded after the study", id)
	}
	run, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil || !strings.Contains(string(md), "each commit pays") {
		t.Errorf("report.md without the commit findings (%v):\n%s", err, md)
	}
	return run, out
}

// commitAt is mode's median commit at rttMs, failing the test when the point is missing,
// failed, fell back or its replica did not match.
func commitAt(t *testing.T, run *result.Run, mode string, rttMs float64) float64 {
	t.Helper()
	for _, p := range run.Points {
		if p.Series != mode || p.Sync == nil || p.Sync.RTTMs != rttMs {
			continue
		}
		if !p.Usable() || p.Sync.FellBack || p.TPS <= 0 {
			t.Errorf("%s at %g ms: failed=%v (%s) checksum=%v fell back=%v tps=%g", mode, rttMs, p.Failed, p.FailReason,
				p.Sync.ChecksumOK, p.Sync.FellBack, p.TPS)
		}
		return p.Sync.CommitP50Ms
	}
	t.Fatalf("no %s point at %g ms", mode, rttMs)
	return 0
}

// MariaDB: async commits do not wait for the replica 40 ms away, semi-sync commits (either
// wait point) wait about one round trip, and every replica matches its primary. The Galera
// modes, also in MariaDB's default set, have their own sweep below.
func TestSyncMariaDBMiniSweep(t *testing.T) {
	skipUnlessRoot(t)
	run, _ := syncSweep(t, append(sysbenchData, "--modes", "semisync-after-sync,semisync-after-commit", "--rtts", "0,40ms")...)
	if len(run.Points) != 6 {
		t.Fatalf("%d points, want 3 modes × 2 RTTs", len(run.Points))
	}
	ctl := commitAt(t, run, "async", 40)
	if ctl > 20 {
		t.Errorf("async commit p50 %.2f ms at 40 ms RTT: the control waited for the replica", ctl)
	}
	for _, m := range []string{"semisync-after-sync", "semisync-after-commit"} {
		if c := commitAt(t, run, m, 40); c < 36 || c > 40*1.5+ctl {
			t.Errorf("%s commit p50 %.2f ms at 40 ms RTT, want about one RTT plus the control's %.2f ms", m, c, ctl)
		}
		commitAt(t, run, m, 0)
	}
}

// PostgreSQL: the five synchronous_commit levels against one synchronous standby next door
// and 40 ms away: off and local do not wait for it, remote_write, on and remote_apply wait a round
// trip, in that order within the median's noise.
func TestSyncPostgresMiniSweep(t *testing.T) {
	skipUnlessPostgres(t)
	// Two RTTs: the findings fit each level's commit line through them.
	run, _ := syncSweep(t, append(sysbenchData, "--engine", "postgres", "--rtts", "0,40ms")...)
	if len(run.Points) != 10 {
		t.Fatalf("%d points, want 5 modes × 2 RTTs", len(run.Points))
	}
	off, local := commitAt(t, run, "pg-off", 40), commitAt(t, run, "pg-local", 40)
	if off > 20 || local > 20 {
		t.Errorf("pg-off %.2f ms, pg-local %.2f ms at 40 ms RTT: neither should wait for the standby", off, local)
	}
	prev := 0.0
	for _, m := range []string{"pg-remote-write", "pg-on", "pg-remote-apply"} {
		c := commitAt(t, run, m, 40)
		if c < 36 {
			t.Errorf("%s commit p50 %.2f ms at 40 ms RTT: want at least one round trip", m, c)
		}
		if c < prev*0.9 {
			t.Errorf("%s commit p50 %.2f ms below the previous level's %.2f ms", m, c, prev)
		}
		prev = c
	}
}

// pgbench's tpcb-like drives the primary: pgbench -i's tables reach the standby through
// streaming replication, a pg-on commit waits for the standby 40 ms away while pg-local's
// does not, the commit percentiles come from pgbench's per-transaction log, and after
// every point all four pgbench tables match on the standby.
func TestSyncPostgresPgbench(t *testing.T) {
	skipUnlessPostgres(t)
	run, _ := syncSweep(t, "--engine", "postgres", "--workload", "tpcb-like", "--scale", "1", "--modes", "pg-on", "--rtts", "0,40ms")
	if len(run.Points) != 4 {
		t.Fatalf("%d points, want 2 modes (pg-local added as the control) × 2 RTTs", len(run.Points))
	}
	if s := run.Spec; s.Driver != "pgbench" || s.Workload != "tpcb-like" || s.Scale != 1 || s.Tables != 0 || run.Environment.PgbenchVersion == "" {
		t.Errorf("spec %+v, pgbench version %q", s, run.Environment.PgbenchVersion)
	}
	local, on := commitAt(t, run, "pg-local", 40), commitAt(t, run, "pg-on", 40)
	if local > 20 {
		t.Errorf("pg-local commit p50 %.2f ms at 40 ms RTT: the control waited for the standby", local)
	}
	if on < 36 || on > 40*1.5+local {
		t.Errorf("pg-on commit p50 %.2f ms at 40 ms RTT, want about one round trip plus the control's %.2f ms", on, local)
	}
	commitAt(t, run, "pg-on", 0)
	commitAt(t, run, "pg-local", 0)
	for _, p := range run.Points {
		ss := p.Sync
		if p.Driver != "pgbench" || p.Workload != "tpcb-like" || !ss.ChecksumOK || ss.Replica != "sync" ||
			ss.CommitP95Ms < ss.CommitP50Ms || ss.CommitP99Ms < ss.CommitP95Ms || p.LatHistogram == nil {
			t.Errorf("%s at %g ms: driver %q workload %q checksum %v replica %q commit p50/p95/p99 %g/%g/%g, histogram %v",
				p.Series, ss.RTTMs, p.Driver, p.Workload, ss.ChecksumOK, ss.Replica, ss.CommitP50Ms, ss.CommitP95Ms, ss.CommitP99Ms, p.LatHistogram != nil)
		}
		t.Logf("%s rtt %g ms: %.1f tps, commit p50 %.2f p95 %.2f p99 %.2f ms, %.0f B/txn on the wire",
			p.Series, ss.RTTMs, p.TPS, ss.CommitP50Ms, ss.CommitP95Ms, ss.CommitP99Ms, ss.WireBytesPerTxn)
	}
}

// kill -9 in the middle of a sync point leaves the lab (primary, replica, wire) for
// `down`, which removes all of it.
func TestSyncDownAfterKill9(t *testing.T) {
	skipUnlessRoot(t)
	state, out := t.TempDir(), t.TempDir()
	cmd := exec.Command(bin, "study", "sync", "--rtts", "20ms", "--threads", "4", "--duration", "60s", "--warmup", "0s",
		"--check-wire=false", "--tables", "1", "--table-size", "1000", "--out", out)
	cmd.Env = append(os.Environ(), "WIRELAB_STATE_DIR="+state)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The first point has started once the progress line names it and its sysbench runs
	// beside the primary (the data set's prepare ran there before).
	started := make(chan struct{})
	var logs bytes.Buffer
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			logs.WriteString(sc.Text() + "\n")
			if !once && strings.Contains(sc.Text(), "point 1/") {
				once = true
				close(started)
			}
		}
	}()
	id := ""
	select {
	case <-started:
	case <-time.After(3 * time.Minute):
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if id = labRunID(t, state); id != "" && sysbenchIn("wl-"+id+"-server") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if id == "" || !sysbenchIn("wl-"+id+"-server") {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if id != "" {
			wl(t, state, "down")
		}
		t.Fatalf("the study never started a point:\n%s", logs.String())
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if o := wl(t, state, "down"); !strings.Contains(o, id) {
		t.Errorf("down did not report lab %s: %s", id, o)
	}
	assertGone(t, id)
}

// Galera, default and tuned send windows: after the async control, the Pair's servers stop
// and a two-node cluster starts across the wire per mode; each commit at 20 ms RTT waits for
// certification by the node in the replica host, about one round trip, and both nodes'
// tables match after every point.
func TestSyncGaleraMiniSweep(t *testing.T) {
	skipUnlessRoot(t)
	modes := []string{"galera", "galera-tuned"}
	run, _ := syncSweep(t, append(sysbenchData, "--modes", strings.Join(modes, ","), "--rtts", "0,20ms")...)
	if len(run.Points) != 6 {
		t.Fatalf("%d points, want 3 modes (async added as the control) × 2 RTTs", len(run.Points))
	}
	ctl := commitAt(t, run, "async", 20)
	for _, m := range modes {
		g0, g20 := commitAt(t, run, m, 0), commitAt(t, run, m, 20)
		if g20 < 18 || g20 > 20*1.5+ctl {
			t.Errorf("%s commit p50 %.2f ms at 20 ms RTT, want about one RTT plus the control's %.2f ms", m, g20, ctl)
		}
		t.Logf("async commit p50 at 20 ms: %.2f ms; %s at 0: %.2f ms, at 20 ms: %.2f ms", ctl, m, g0, g20)
	}
	for _, p := range run.Points {
		if !slices.Contains(modes, p.Series) {
			continue
		}
		ss := p.Sync
		if ss.FlowControlPaused < 0 || ss.FlowControlPaused > 1 || !ss.ChecksumOK || ss.Replica != "Synced" {
			t.Errorf("%s at %g ms: flow control paused %g, checksum %v, replica %q", p.Series, ss.RTTMs, ss.FlowControlPaused, ss.ChecksumOK, ss.Replica)
		}
		t.Logf("%s rtt %g ms (measured %.2f): %.1f tps, commit p50 %.2f p95 %.2f ms, fc paused %.3f sent %d recv %d",
			p.Series, ss.RTTMs, ss.RTTMeasuredMs, p.TPS, ss.CommitP50Ms, ss.CommitP95Ms, ss.FlowControlPaused, ss.FlowControlSent, ss.FlowControlRecv)
	}
}
