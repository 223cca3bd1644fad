package replication

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/nstest"
	"github.com/wirelab/wirelab/internal/postgres"
	"github.com/wirelab/wirelab/internal/study"
	"github.com/wirelab/wirelab/internal/sysbench"
	"github.com/wirelab/wirelab/internal/tunnel"
)

// skipUnlessPostgres skips unless root (not -short) with PostgreSQL 15's binaries, its OS
// user and the lab's tools.
func skipUnlessPostgres(t *testing.T) {
	t.Helper()
	nstest.SkipUnlessRoot(t, "ip", "iptables", "sysbench", "setpriv")
	if _, err := postgres.FindBinDir(); err != nil {
		nstest.Unavailable(t, "%v", err)
	}
}

// TestPostgresReplicationChannelSwitch builds a replica and a server host across a
// delayed wire, makes the standby a base backup of the primary, and switches it
// native → tunnel → native while sysbench writes: each switch must end with the WAL
// receiver streaming from the new endpoint (the primary sees the WAL sender's client move
// to the tunnel exit and back), and after the load the standby catches up with identical
// tables.
func TestPostgresReplicationChannelSwitch(t *testing.T) {
	skipUnlessPostgres(t)
	self := nstest.Wirelab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	log := nstest.Logger(t, slog.LevelWarn)
	l, err := lab.Up(ctx, lab.Options{Hosts: []string{lab.Replica, lab.Server}, StateDir: t.TempDir(), Self: self, Logger: log})
	if err != nil {
		t.Fatalf("lab up: %v", err)
	}
	t.Cleanup(func() {
		if err := l.Down(context.Background()); err != nil {
			t.Errorf("lab down: %v", err)
		}
	})
	if err := l.Shape(ctx, link.Condition{RateBps: 20_000_000, Delay: 10 * time.Millisecond}, "", self); err != nil {
		t.Fatalf("shape: %v", err)
	}
	o := Options{Engine: engine.Postgres, BufferPool: "128M", Tables: 2, TableSize: 2000}
	srv, err := l.StartServer(ctx, lab.Server, postgresServers(o)[0].DB)
	if err != nil {
		t.Fatalf("start primary: %v", err)
	}
	conn := srv.Conn()
	load := study.SysbenchTo(conn, sysbench.Options{Workload: Workload, Tables: o.Tables, TableSize: o.TableSize,
		Socket: conn.Socket, NS: l.State.NS(lab.Server), Cgroup: l.State.Cgroup})
	if err := sysbench.Prepare(ctx, load, log); err != nil {
		t.Fatalf("prepare: %v", err)
	}

	b := study.LabBackend(l, self, lab.Replica)
	p := &Pair{Backend: b, Tables: SysbenchTables(o.Tables), Self: self, Tunnel: lab.TunnelOptions{Knobs: tunnel.Knobs{Compress: tunnel.Zstd}}, Log: log}
	defer p.Close()
	rep, err := openPostgres(ctx, p, &study.Env{Backend: b, Servers: []engine.Server{srv}, Logger: log, Self: self}, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := CreateHeartbeat(ctx, p.SrcDB, PostgresDialect); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := rep.Start(ctx, 2*time.Minute); err != nil {
		t.Fatalf("start standby: %v", err)
	}
	// The backup (a fresh cluster and the data set, some 35 MB) crosses the 20 Mbit/s wire.
	t.Logf("base backup across the wire, standby start, catch-up and checksums: %s", time.Since(t0).Round(time.Millisecond))
	primary := srv.(*engine.PostgresServer)
	assertSenderFrom(ctx, t, primary, lab.HostAddr[lab.Replica])

	hb := StartHeartbeat(ctx, p.SrcDB, PostgresDialect, HeartbeatEvery, log)
	defer hb.Stop()
	time.Sleep(time.Second) // until the standby has a fresh heartbeat, not the one from before the backup
	lagS := StartLagSampler(ctx, p.RepDB, PostgresDialect, HeartbeatEvery, time.Now())
	defer lagS.Stop()
	wal0, err := rep.LogBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stat0, _ := primary.Exec(ctx, walStats)

	load.Time, load.Rate, load.Threads, load.RandType = 14*time.Second, 50, 2, "uniform"
	done := make(chan error, 1)
	go func() {
		_, err := sysbench.Run(ctx, load, nil, log)
		done <- err
	}()
	for _, step := range []struct {
		ch   Channel
		from string // the WAL sender's client address on the primary
	}{{Tunnel, "127.0.0.1"}, {Native, lab.HostAddr[lab.Replica]}} {
		time.Sleep(4 * time.Second)
		ts := time.Now()
		if err := rep.Use(ctx, step.ch); err != nil {
			t.Fatalf("switch to %s: %v", step.ch, err)
		}
		switched := time.Since(ts)
		before, err := rep.LogBytes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cu, err := rep.CatchUp(ctx, time.Minute)
		if err != nil {
			t.Fatalf("catch up after the switch to %s: %v", step.ch, err)
		}
		// The new connection re-streamed its WAL segment from the start: caught up means
		// it has received again at least what the primary had written before CatchUp.
		r, _, _ := rep.(*postgresReplicator).rep.Receiver(ctx)
		if got, err := postgres.ParseLSN(r.WrittenLSN); err != nil || int64(got) < before {
			t.Errorf("after catch-up on %s the receiver has written up to %s, the primary was at %#x", step.ch, r.WrittenLSN, before)
		}
		t.Logf("switched to %s under load in %s, then received again and caught up in %s (receiver %+v)",
			step.ch, switched.Round(time.Millisecond), cu.Round(time.Millisecond), r)
		if p.Current() != step.ch {
			t.Errorf("current channel %s, want %s", p.Current(), step.ch)
		}
		assertSenderFrom(ctx, t, primary, step.from)
	}
	if err := <-done; err != nil {
		t.Fatalf("sysbench: %v", err)
	}
	wal1, err := rep.LogBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stat1, _ := primary.Exec(ctx, walStats)
	t.Logf("pg_stat_wal (records, full-page images, bytes) before the load %s, after %s", strings.TrimSpace(stat0), strings.TrimSpace(stat1))
	catch, err := rep.CatchUp(ctx, time.Minute)
	if err != nil {
		t.Fatalf("catch up: %v", err)
	}
	if err := rep.Verify(ctx); err != nil {
		t.Fatalf("verify: %v", err)
	}
	samples, fails := lagS.Stop()
	writes, wfails := hb.Stop()
	var worst time.Duration
	for _, s := range samples {
		worst = max(worst, s.Lag)
	}
	t.Logf("WAL generated %d bytes; catch-up %s; heartbeat %d writes (%d failed); lag %d samples (%d failed), highest %s",
		wal1-wal0, catch.Round(time.Millisecond), writes, wfails, len(samples), fails, worst.Round(time.Millisecond))
	if wal1 <= wal0 {
		t.Errorf("WAL position did not grow under load: %d -> %d", wal0, wal1)
	}
	if len(samples) < 100 || worst > 5*time.Second {
		t.Errorf("lag: %d samples, highest %s; want a reading every 100 ms and the switches to cost seconds at most", len(samples), worst)
	}
}

// walStats is how much WAL the primary wrote, and how many full-page images.
const walStats = "SELECT wal_records, wal_fpi, wal_bytes FROM pg_stat_wal"

// assertSenderFrom checks that the primary's one WAL sender streams to a client at addr.
func assertSenderFrom(ctx context.Context, t *testing.T, primary *engine.PostgresServer, addr string) {
	t.Helper()
	var out string
	var err error
	for range 50 { // the old sender may linger a moment after the standby reconnected
		out, err = primary.Exec(ctx, "SELECT client_addr, state FROM pg_stat_replication WHERE application_name = 'wirelab-replica'")
		if err == nil && strings.TrimSpace(out) == addr+"\tstreaming" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("pg_stat_replication: %q, %v; want one sender streaming to %s", out, err, addr)
}

// TestPostgresReplicationStudy runs the study itself on PostgreSQL, scenario 1 at one RTT
// and the fault scenario, on both channels: every point must be usable (caught up,
// checksums equal), the fault must show as lag, and results.json must say which engine
// and wal_compression setting it measured.
func TestPostgresReplicationStudy(t *testing.T) {
	skipUnlessPostgres(t)
	self := nstest.Wirelab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	o := Options{Engine: engine.Postgres, Channels: ChannelsFor(engine.Postgres), Scenarios: []int{1, 4},
		Link: link.Condition{RateBps: 2_000_000}, RTTs: []time.Duration{100 * time.Millisecond}, LagQPS: 300,
		Duration: 10 * time.Second, AbortLag: 0, CatchUpTimeout: 2 * time.Minute, Tables: 2, TableSize: 1000,
		Threads: 2, RandType: "uniform", BufferPool: "128M", Tunnel: lab.TunnelOptions{Knobs: tunnel.Knobs{Compress: tunnel.Zstd}}, Rule: DefaultRule,
		Fault: Fault{At: 3 * time.Second, For: 3 * time.Second}, SearchFactor: 2, Precision: 0.05}
	s := &study.Session{Logger: log, StateDir: t.TempDir(), Self: self, Progress: nstest.Log(t), OutDir: t.TempDir()}
	run, err := s.Run(ctx, ctx, New(o))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(run.Points) != 4 {
		t.Fatalf("%d points, want 4 (scenario 1 and the fault, on native and tunnel)", len(run.Points))
	}
	for _, p := range run.Points {
		rs := p.Replication
		if !p.Usable() {
			t.Errorf("%s/%s: failed=%v: %s", p.Series, p.Channel, p.Failed, p.FailReason)
			continue
		}
		t.Logf("%s/%s: %.0f qps, lag max %.2f s p99 %.2f s, WAL %.3f Mbit/s, wire %.3f Mbit/s, catch-up %.1f s",
			p.Series, p.Channel, p.QPS, rs.LagMaxS, rs.LagP99S, rs.BinlogMbitS, p.WireMbitS(), rs.CatchUpS)
		if rs.BinlogBytes <= 0 || p.WireBytesPerSDown <= 0 {
			t.Errorf("%s/%s: WAL %d bytes, wire %.0f B/s: want both", p.Series, p.Channel, rs.BinlogBytes, p.WireBytesPerSDown)
		}
		if p.Series == FaultRun && rs.LagMaxS < 2 {
			t.Errorf("%s: highest lag %.2f s; the 3 s drop did not show", p.Channel, rs.LagMaxS)
		}
	}
	notes := strings.Join(run.Notes, "\n")
	for _, want := range []string{"wal_compression=", "pg_basebackup", "native-compressed is not available on PostgreSQL"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if run.Spec.Extra["engine"] != "postgres" {
		t.Errorf("spec extra %v: want engine postgres", run.Spec.Extra)
	}
}
