package replaystudy

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/mariadb"
	"github.com/wirelab/wirelab/internal/nstest"
	"github.com/wirelab/wirelab/internal/postgres"
	"github.com/wirelab/wirelab/internal/replay"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
)

// writeSysbenchDump writes a mariadb-dump-like file of sysbench's two tables, n rows
// each: the data the captured sysbench log (4 sessions, ids up to 672) replays onto.
func writeSysbenchDump(t *testing.T, n int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	text := func(l int) string {
		b := make([]byte, l)
		for i := range b {
			b[i] = byte('0' + rng.IntN(10))
		}
		return string(b)
	}
	var b strings.Builder
	b.WriteString("-- MariaDB dump 10.19  Distrib 10.11.19-MariaDB\n")
	for tb := 1; tb <= 2; tb++ {
		fmt.Fprintf(&b, "DROP TABLE IF EXISTS `sbtest%d`;\nCREATE TABLE `sbtest%d` (`id` int NOT NULL AUTO_INCREMENT, `k` int NOT NULL DEFAULT 0, "+
			"`c` char(120) NOT NULL DEFAULT '', `pad` char(60) NOT NULL DEFAULT '', PRIMARY KEY (`id`), KEY `k_%d` (`k`)) ENGINE=InnoDB;\n", tb, tb, tb)
		for i := 1; i <= n; i++ {
			sep := ","
			if i%100 == 1 {
				fmt.Fprintf(&b, "INSERT INTO `sbtest%d` VALUES ", tb)
				sep = ""
			}
			fmt.Fprintf(&b, "%s(%d,%d,'%s','%s')", sep, i, rng.IntN(n)+1, text(119), text(59))
			if i%100 == 0 || i == n {
				b.WriteString(";\n")
			}
		}
	}
	p := filepath.Join(t.TempDir(), "sbtest.sql")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runReplayStudy runs o in a fresh lab with the real wirelab binary as the replayer, its
// results in o.OutDir (a temporary directory).
func runReplayStudy(t *testing.T, o *Options) *result.Run {
	t.Helper()
	self := nstest.Wirelab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	o.OutDir = t.TempDir()
	s := &study.Session{Logger: nstest.Logger(t, slog.LevelWarn), StateDir: t.TempDir(), Self: self, Progress: nstest.Log(t), OutDir: o.OutDir}
	run, err := s.Run(ctx, ctx, New(*o))
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if len(run.Points) != len(o.Links)*len(o.Series) {
		t.Fatalf("%d points, want %d", len(run.Points), len(o.Links)*len(o.Series))
	}
	for _, p := range run.Points {
		if p.Failed || p.Replay == nil {
			t.Fatalf("%s at %g ms: failed: %s", p.Series, p.LinkDelayMs, p.FailReason)
		}
	}
	if _, err := os.Stat(filepath.Join(o.OutDir, "report.md")); err != nil {
		t.Errorf("no report: %v", err)
	}
	return run
}

// sessionTimes reads a point's sessions file: session -> its figures.
func sessionTimes(t *testing.T, dir string, p result.Point) map[string]replay.SessionFigures {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, p.Replay.SessionsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]replay.SessionFigures{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var s replay.SessionFigures
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		out[s.Session] = s
	}
	return out
}

// TestReplayAcrossTheWire replays a real sysbench capture (MariaDB's general log: 4
// sessions, 204 statements, 4 SET GLOBALs the bench user may not run) at 0 and 20 ms RTT
// onto a dump loaded once and reset before the second point: every statement is replayed
// at both, only the SETs fail, and each session's time grows by about its round trips ×
// 20 ms.
func TestReplayAcrossTheWire(t *testing.T) {
	nstest.SkipUnlessRoot(t, "ip", "iptables", "mariadb", "mariadb-dump")
	nstest.NeedMariaDB(t)
	log, err := CheckLog(context.Background(), sysbenchLog, LogChecks{})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Log: log, Links: []link.Condition{{}, {Delay: 10 * time.Millisecond}}, Series: []Series{{}}, Speed: replay.SpeedMax,
		Data: Data{Dump: writeSysbenchDump(t, 1000)}, Checksums: true, BufferPool: "128M"}
	run := runReplayStudy(t, &o)
	p0, p20 := run.Points[0], run.Points[1]
	for _, p := range run.Points {
		r := p.Replay
		if r.Statements != 204 || r.Sessions != 4 || p.Errors != 4 || len(r.ErrorsByKind) != 1 || r.ErrorsByKind[0].Kind != "set" {
			t.Errorf("at %g ms: %d statements, %d sessions, %d errors %+v; want 204, 4, the 4 SETs", p.LinkDelayMs, r.Statements, r.Sessions, p.Errors, r.ErrorsByKind)
		}
		if len(r.Checksums) != 2 || r.RoundTripsPerTxn < 10 || p.QPS <= 0 || p.TPS <= 0 || r.WireBytesDown == 0 {
			t.Errorf("at %g ms: checksums %v, round trips %g, qps %g, tps %g, wire down %d", p.LinkDelayMs, r.Checksums, r.RoundTripsPerTxn, p.QPS, p.TPS, r.WireBytesDown)
		}
	}
	// Sessions that write the same rows race differently at another RTT, so the tables
	// of this 4-session log need not end alike (a one-session log must: below).
	if p0.Replay.ResetS != 0 || p20.Replay.ResetS <= 0 {
		t.Errorf("reset %g s then %g s", p0.Replay.ResetS, p20.Replay.ResetS)
	}
	if want := p20.Replay.RoundTripsPerTxn * 20; p20.Replay.TxnLatP50Ms < 0.9*want {
		t.Errorf("median transaction at 20 ms %g ms, want about %g (%g round trips)", p20.Replay.TxnLatP50Ms, want, p20.Replay.RoundTripsPerTxn)
	}
	s0, s20 := sessionTimes(t, o.OutDir, p0), sessionTimes(t, o.OutDir, p20)
	var off []float64
	for id, a := range s0 {
		b, ok := s20[id]
		if !ok || a.RoundTrips != b.RoundTrips {
			t.Fatalf("session %s: %+v then %+v", id, a, b)
		}
		want := float64(b.RoundTrips+b.ConnectRoundTrips) * 20
		off = append(off, (b.SessionMs-a.SessionMs)/want-1)
	}
	// The lab's delay line shares this machine with the servers and the replayer: on a
	// busy 2-core box a round trip takes up to a few ms more than asked. The 5% rule of a
	// quiet machine is the e2e test's.
	sort.Float64s(off)
	if len(off) != 4 || off[len(off)/2] < -0.25 || off[len(off)/2] > 0.25 {
		t.Errorf("each session's time at 20 ms less at 0 against its round trips × 20 ms: %v, want the median within 25%%", off)
	}
}

// TestReplayPostgresFromSysbench replays PostgreSQL's capture of the same workload
// (pgreplay's stderr format) onto sysbench's tables at 0 and 20 ms RTT: the second point
// starts from the template copy, and the tables' checksums are recorded.
func TestReplayPostgresFromSysbench(t *testing.T) {
	nstest.SkipUnlessRoot(t, "ip", "iptables", "sysbench", "setpriv")
	if _, err := postgres.FindBinDir(); err != nil {
		nstest.Unavailable(t, "%v", err)
	}
	log, err := CheckLog(context.Background(), pgLog, LogChecks{})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Log: log, Links: []link.Condition{{}, {Delay: 10 * time.Millisecond}}, Series: []Series{{}}, Speed: replay.SpeedMax,
		Data: Data{Sysbench: true, Tables: 2, TableSize: 1000}, Checksums: true, BufferPool: "128M"}
	run := runReplayStudy(t, &o)
	p20 := run.Points[1]
	for _, p := range run.Points {
		if p.Replay.Statements != 140 || len(p.Replay.Checksums) != 2 || !strings.Contains(p.Replay.Checksums[0].Checksum, " rows, md5 ") {
			t.Errorf("at %g ms: %d statements, checksums %v", p.LinkDelayMs, p.Replay.Statements, p.Replay.Checksums)
		}
	}
	if p20.Replay.ResetS <= 0 {
		t.Errorf("reset %g s", p20.Replay.ResetS)
	}
	if p20.Replay.TxnLatP50Ms < 0.9*p20.Replay.RoundTripsPerTxn*20 {
		t.Errorf("median transaction at 20 ms %g ms for %g round trips", p20.Replay.TxnLatP50Ms, p20.Replay.RoundTripsPerTxn)
	}
}

// oneSession is the general log at path with only session id's lines (and the header):
// a capture whose writes race with no other session's.
func oneSession(t *testing.T, path, id string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	out := strings.Join(lines[:3], "")
	for _, l := range lines[3:] {
		if m := generalID.FindStringSubmatch(l); m != nil && m[1] == id {
			out += l
		}
	}
	p := filepath.Join(t.TempDir(), "one-session.log")
	if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// generalID is a general log entry's thread id, after its optional time.
var generalID = regexp.MustCompile(`^(?:\d{6}\s+\d+:\d\d:\d\d)?\t+\s*(\d+) `)

// existingAddr is an address of the benchmarking range the existing-server test puts on
// an interface of its own in this machine's namespace.
const existingAddr = "198.18.250.9"

// existingServer starts a MariaDB outside any lab on existingAddr, with user wlx on an
// empty database wlrp and a table of the user's own in another database; cleanup stops
// it and removes the interface.
func existingServer(t *testing.T) (*mariadb.Server, *engine.ExternalConfig) {
	t.Helper()
	for _, argv := range [][]string{{"link", "add", "wlt-rpx", "type", "veth", "peer", "name", "wlt-rpx-p"},
		{"addr", "add", existingAddr + "/32", "dev", "wlt-rpx"}, {"link", "set", "wlt-rpx", "up"}} {
		if out, err := exec.Command("ip", argv...).CombinedOutput(); err != nil {
			_ = exec.Command("ip", "link", "del", "wlt-rpx").Run()
			t.Fatalf("ip %s: %v: %s", strings.Join(argv, " "), err, out)
		}
	}
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", "wlt-rpx").Run() })
	ln, err := net.Listen("tcp", existingAddr+":0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := filepath.Join(nstest.SharedDir(t, "wlrpx"), "srv")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srv, err := mariadb.Start(ctx, mariadb.Config{Dir: dir, BindAddress: existingAddr, Port: port, BufferPool: "128M", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	if _, err := srv.Exec(ctx, "CREATE DATABASE wlrp; CREATE DATABASE mine; CREATE TABLE mine.keep (id INT PRIMARY KEY); "+
		"CREATE USER 'wlx'@'%' IDENTIFIED BY 'rp-s3cret'; GRANT ALL ON wlrp.* TO 'wlx'@'%'"); err != nil {
		t.Fatal(err)
	}
	dsn, err := engine.ParseDSN(fmt.Sprintf("wlx@tcp(%s:%d)/wlrp", existingAddr, port))
	if err != nil {
		t.Fatal(err)
	}
	return srv, &engine.ExternalConfig{DSN: dsn, IP: existingAddr, Password: "rp-s3cret", Timeout: 5 * time.Second}
}

// TestReplayOntoAnExistingServer replays one session of the sysbench capture (it
// writes) onto an existing server (--server-dsn) from a dump: the database must be empty
// before, every point starts from the dump and ends with the same tables, and the replay
// leaves the database empty again and the user's other tables alone.
func TestReplayOntoAnExistingServer(t *testing.T) {
	nstest.SkipUnlessRoot(t, "ip", "iptables", "mariadb", "mariadb-dump")
	nstest.NeedMariaDB(t)
	srv, cfg := existingServer(t)
	ctx := context.Background()
	x, err := study.OpenExisting(ctx, cfg, 0, "--server-dsn")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Exec(ctx, "CREATE TABLE wlrp.theirs (id INT)"); err != nil {
		t.Fatal(err)
	}
	if err := CheckEmpty(ctx, x, "--server-dsn"); err == nil || !strings.Contains(err.Error(), "theirs") {
		t.Errorf("a database with a table: %v", err)
	}
	if _, err := srv.Exec(ctx, "DROP TABLE wlrp.theirs"); err != nil {
		t.Fatal(err)
	}
	if err := CheckEmpty(ctx, x, "--server-dsn"); err != nil {
		t.Fatal(err)
	}
	log, err := CheckLog(ctx, oneSession(t, sysbenchLog, "15"), LogChecks{})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Log: log, Links: []link.Condition{{}, {Delay: 10 * time.Millisecond}}, Series: []Series{{}}, Speed: replay.SpeedMax,
		Data: Data{Dump: writeSysbenchDump(t, 1000)}, Checksums: true, Existing: x}
	run := runReplayStudy(t, &o)
	for _, p := range run.Points {
		if p.Replay.Statements != 100 || len(p.Replay.Checksums) != 2 || p.CPUServer != 0 || p.Bottleneck == "" {
			t.Errorf("at %g ms: %d statements, checksums %v, server CPU %g, bottleneck %q", p.LinkDelayMs, p.Replay.Statements, p.Replay.Checksums, p.CPUServer, p.Bottleneck)
		}
	}
	if !slices.Equal(run.Points[0].Replay.Checksums, run.Points[1].Replay.Checksums) {
		t.Errorf("checksums %v then %v", run.Points[0].Replay.Checksums, run.Points[1].Replay.Checksums)
	}
	left, err := srv.Exec(ctx, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'wlrp'; SELECT COUNT(*) FROM mine.keep")
	if err != nil || strings.Fields(left)[0] != "0" {
		t.Errorf("the replay left %q tables in wlrp (%v)", left, err)
	}
}
