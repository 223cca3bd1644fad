package replay

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
)

// serverEnv makes the test binary a fake MySQL server (TestMain): it prints its port and
// serves until its standard input closes. Benchmarks run it as a process of its own, so
// the replayer's CPU time is the replayer's alone.
const serverEnv = "WIRELAB_REPLAY_TEST_SERVER"

// serveFake is the fake server process's body.
func serveFake() int {
	f, err := newFakeMySQL()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	f.record = false // a long replay must not grow the server
	fmt.Println(f.port())
	_, _ = io.Copy(io.Discard, os.Stdin)
	f.ln.Close()
	return 0
}

// fakeServerProcess starts the fake server as a process of its own and returns its port.
func fakeServerProcess(b *testing.B) int {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverEnv+"=1")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	port, err := strconv.Atoi(line[:len(line)-1])
	if err != nil {
		b.Fatal(err)
	}
	return port
}

// generatedLog writes a synthetic general log of lines lines to a file.
func generatedLog(b *testing.B, lines int64, sessions int) (string, GenStats) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "general.log")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, err := GenerateGeneralLog(f, GenOptions{Lines: lines, Sessions: sessions, Tables: 4, TableSize: 10000, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	return path, st
}

// BenchmarkStatementCPU is the replayer's CPU time per statement at --speed max against
// a fake MySQL server in another process over loopback: reading the log (this package's
// test reader), scheduling, the driver, the meter and the figures. b.N statements.
func BenchmarkStatementCPU(b *testing.B) {
	port := fakeServerProcess(b)
	path, st := generatedLog(b, int64(b.N)+3+2*8, 8)
	o := Options{Log: path, Format: "mysql-general", Speed: SpeedMax,
		Target: Target{Engine: "mariadb", Host: "127.0.0.1", Port: port, User: "sbtest", DB: "sbtest"}}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	before := ownCost()
	b.ResetTimer()
	sum, err := Replay(context.Background(), o, newGeneralReader(f), io.Discard)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	after := ownCost()
	if sum.Statements != st.Statements {
		b.Fatalf("replayed %d of %d statements", sum.Statements, st.Statements)
	}
	cpu := after.UserS + after.SysS - before.UserS - before.SysS
	b.ReportMetric(cpu/float64(sum.Statements)*1e6, "cpu-µs/stmt")
	// What that costs a 2-core machine at 1,000 statements/s.
	b.ReportMetric(cpu/float64(sum.Statements)*1000/2*100, "%machine@1000/s")
}

// BenchmarkChildGeneratedLog runs the real child (this test binary, through Run) on a
// generated log against a fake server process and reports the child's own figures: peak
// memory, CPU as a share of a 2-core machine, and its rate. The log's size and the pace
// come from the environment: WIRELAB_REPLAY_BENCH_LINES (default 200000),
// WIRELAB_REPLAY_BENCH_SPEED (default max; the log holds 1,000 statements a second, so
// 1 replays at 1,000 statements/s) and WIRELAB_REPLAY_BENCH_FOR (default none).
func BenchmarkChildGeneratedLog(b *testing.B) {
	lines := envInt(b, "WIRELAB_REPLAY_BENCH_LINES", 200000)
	speed, err := ParseSpeed(envOr("WIRELAB_REPLAY_BENCH_SPEED", "max"))
	if err != nil {
		b.Fatal(err)
	}
	var forD time.Duration
	if s := os.Getenv("WIRELAB_REPLAY_BENCH_FOR"); s != "" {
		if forD, err = time.ParseDuration(s); err != nil {
			b.Fatal(err)
		}
	}
	b.Setenv(childEnv, "1")
	port := fakeServerProcess(b)
	path, st := generatedLog(b, int64(lines), 32)
	o := Options{Log: path, Format: "mysql-general", Speed: speed, For: forD, Binary: os.Args[0],
		Launcher: execx.Local{Dir: b.TempDir()},
		Target:   Target{Engine: "mariadb", Host: "127.0.0.1", Port: port, User: "sbtest", DB: "sbtest"}}
	for i := 0; i < b.N; i++ {
		sum, err := Run(context.Background(), o, nil)
		if err != nil {
			b.Fatal(err)
		}
		if forD == 0 && sum.Statements != st.Statements {
			b.Fatalf("replayed %d of %d statements", sum.Statements, st.Statements)
		}
		cpu := sum.Cost.UserS + sum.Cost.SysS
		b.ReportMetric(float64(sum.Cost.MaxRSSBytes)/(1<<20), "max-rss-MiB")
		b.ReportMetric(cpu/sum.WallS/2*100, "%machine")
		b.ReportMetric(float64(sum.Statements)/sum.WallS, "stmts/s")
		b.ReportMetric(cpu/float64(sum.Statements)*1e6, "cpu-µs/stmt")
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func envInt(b *testing.B, k string, def int) int {
	n, err := strconv.Atoi(envOr(k, strconv.Itoa(def)))
	if err != nil {
		b.Fatalf("%s: %v", k, err)
	}
	return n
}
