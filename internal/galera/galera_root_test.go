package galera

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/nstest"
	"github.com/wirelab/wirelab/internal/sysbench"
)

var update = flag.Bool("update", false, "rewrite "+statusFixture+" from the real primary after the load")

func skipUnlessGalera(t *testing.T) {
	t.Helper()
	nstest.SkipUnlessRoot(t, "ip", "ss", "cp", "sysbench", "mariadb-install-db")
	if _, err := findProvider(""); err != nil {
		nstest.Unavailable(t, "%v", err)
	}
	nstest.NeedMariaDB(t)
}

// TestGaleraCommitPaysTheRTT builds a server and a replica host 20 ms apart (10 ms each
// way), starts a two-node cluster across the wire, and runs a one-thread sysbench
// oltp_write_only over the primary's socket: no transaction may take less than one RTT,
// since each commit waits for the replica's acknowledgement. The tables must match on both
// nodes after the load, and Close must leave no process, datadir, lab record or listening
// galera port. A second, tuned cluster is then left running and removed the way `wirelab
// down` removes a lab whose wirelab was killed: from the state file alone.
func TestGaleraCommitPaysTheRTT(t *testing.T) {
	skipUnlessGalera(t)
	self := nstest.Wirelab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	log := nstest.Logger(t, slog.LevelInfo)
	stateDir := t.TempDir()
	l, err := lab.Up(ctx, lab.Options{Hosts: []string{lab.Server, lab.Replica}, StateDir: stateDir, Self: self, Logger: log})
	if err != nil {
		t.Fatalf("lab up: %v", err)
	}
	t.Cleanup(func() {
		if err := l.Down(context.Background()); err != nil {
			t.Errorf("lab down: %v", err)
		}
	})
	const rtt = 20 * time.Millisecond
	if err := l.Shape(ctx, link.Condition{Delay: rtt / 2}, "", self); err != nil {
		t.Fatalf("shape: %v", err)
	}
	if _, err := Start(ctx, l, Default(rtt/2)); !errors.Is(err, ErrRTTAboveTimeouts) {
		t.Fatalf("a cluster set up for 10 ms on a 20 ms wire: err = %v, want ErrRTTAboveTimeouts", err)
	}

	t0 := time.Now()
	c, err := Start(ctx, l, Default(rtt))
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Logf("cluster up (bootstrap, copy, restart, join with IST across the wire, synced) in %s", time.Since(t0).Round(time.Millisecond))
	pids := []int{c.Primary.Pid(), c.Replica.Pid()}
	dirs := []string{c.Primary.Dir, c.Replica.Dir}
	assertGcommAcrossWire(ctx, t, l)

	conn := c.Primary.Conn()
	load := sysbench.Options{Workload: "oltp_write_only", Tables: 2, TableSize: 1000, Driver: sysbench.DriverMySQL,
		User: conn.User, Password: conn.Password, DB: conn.DB, CertDir: conn.CertDir,
		Socket: conn.Socket, NS: l.State.NS(lab.Server), Cgroup: l.State.Cgroup}
	if err := sysbench.Prepare(ctx, load, log); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	before, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	load.Threads, load.Time = 1, 5*time.Second
	sum, err := sysbench.Run(ctx, load, nil, log)
	if err != nil {
		t.Fatalf("sysbench: %v", err)
	}
	after, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := after.Since(before)
	if *update {
		out, err := c.Primary.Exec(ctx, statusQuery)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(statusFixture, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("1 thread oltp_write_only at RTT %s: %.1f TPS, latency min %.2f ms, avg %.2f ms (%.2f RTT), p95 %.2f ms; "+
		"write sets replicated %d (%d bytes), flow control paused %.3f, sent %d, recv %d, send queue avg %.3f, cert failures %d",
		rtt, sum.TPS, sum.LatMin, sum.LatAvg, sum.LatAvg/ms(rtt), sum.LatPct, w.Primary.Replicated, w.Primary.ReplicatedBytes,
		w.Primary.FlowControlPaused, w.Replica.FlowControlSent, w.Primary.FlowControlRecv, w.Primary.SendQueueAvg, w.Primary.CertFailures)
	if sum.Transactions == 0 || sum.LatMin < ms(rtt) {
		t.Errorf("%d transactions, fastest %.2f ms: every commit must wait one RTT (%s) for the replica", sum.Transactions, sum.LatMin, rtt)
	}
	if w.Primary.Replicated < sum.Transactions || w.Replica.Received < sum.Transactions {
		t.Errorf("%d transactions but %d write sets replicated, %d received across the wire", sum.Transactions, w.Primary.Replicated, w.Replica.Received)
	}
	tables, err := c.Verify(ctx)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	t.Logf("checksums match on %d tables: %s", len(tables), strings.Join(tables, ", "))

	if err := c.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := c.Close(ctx); err != nil {
		t.Errorf("second close: %v", err)
	}
	assertGone(ctx, t, l, pids, dirs)
	if l.State.DB != nil || len(l.State.Procs) > 0 && strings.HasPrefix(l.State.Procs[0].Name, "mariadb") {
		t.Errorf("lab still records the cluster: db %+v, procs %+v", l.State.DB, l.State.Procs)
	}

	// A tuned cluster, abandoned as if wirelab had been killed: `wirelab down` reads the
	// state file and must remove it.
	c2, err := Start(ctx, l, Tuned(rtt))
	if err != nil {
		t.Fatalf("start tuned: %v", err)
	}
	out, err := c2.Primary.Exec(ctx, "SELECT @@wsrep_provider_options")
	if err != nil || !strings.Contains(out, "evs.send_window = 512") || !strings.Contains(out, "evs.user_send_window = 512") {
		t.Errorf("tuned provider options: err %v, %s", err, out)
	}
	pids, dirs = []int{c2.Primary.Pid(), c2.Replica.Pid()}, []string{c2.Primary.Dir, c2.Replica.Dir}
	st, err := lab.Load(stateDir, l.State.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if err := lab.DownState(ctx, execx.OS{}, st, log); err != nil {
		t.Fatalf("down from the state file: %v", err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("mariadbd %d survived the lab's teardown", pid)
		}
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s survived the lab's teardown", d)
		}
	}
	t.Logf("load average at the end: %s", loadavg())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// assertGcommAcrossWire checks that the primary's group connection goes to the replica
// host's lab address: galera traffic crosses the shaped wire.
func assertGcommAcrossWire(ctx context.Context, t *testing.T, l *lab.Lab) {
	t.Helper()
	out, err := l.Exec(ctx, lab.Server, "ss", "-Htn", "state", "established", "( sport = :"+strconv.Itoa(GcommPort)+" or dport = :"+strconv.Itoa(GcommPort)+" )")
	if err != nil {
		t.Fatalf("ss: %v", err)
	}
	if !strings.Contains(string(out), lab.HostAddr[lab.Replica]+":") {
		t.Errorf("no gcomm connection to %s in the server host:\n%s", lab.HostAddr[lab.Replica], out)
	}
}

// assertGone checks that the nodes' processes, datadirs and listening ports are gone.
func assertGone(ctx context.Context, t *testing.T, l *lab.Lab, pids []int, dirs []string) {
	t.Helper()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("mariadbd %d still runs after Close", pid)
		}
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s still exists after Close", d)
		}
	}
	for _, h := range []string{lab.Server, lab.Replica} {
		out, err := l.Exec(ctx, h, "ss", "-Htln")
		if err != nil {
			t.Fatalf("ss in %s: %v", h, err)
		}
		for _, p := range []int{GcommPort, ISTPort, SSTPort, 3306} {
			if strings.Contains(string(out), ":"+strconv.Itoa(p)+" ") {
				t.Errorf("port %d still listens in %s after Close:\n%s", p, h, out)
			}
		}
	}
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
