package pgbench

import (
	"compress/gzip"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readFixtureLog reads the gzipped per-thread logs of a real TPC-B run.
func readFixtureLog(t *testing.T) []logEntry {
	t.Helper()
	files, _ := filepath.Glob("testdata/tpcb_log/*.gz")
	var all []logEntry
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		entries, failed, err := parseLog(zr)
		f.Close()
		if err != nil || failed != 0 {
			t.Fatalf("%s: %v, %d failed", name, err, failed)
		}
		all = append(all, entries...)
	}
	if len(files) != 2 {
		t.Fatalf("%d log files, want one per thread (2)", len(files))
	}
	return all
}

func TestLogOfARealRun(t *testing.T) {
	b, err := os.ReadFile("testdata/tpcb_log.stdout")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := ParseSummary(string(b))
	if err != nil {
		t.Fatal(err)
	}
	all := readFixtureLog(t)
	if int64(len(all)) != sum.Transactions {
		t.Fatalf("%d logged transactions, pgbench counted %d", len(all), sum.Transactions)
	}
	whole := latencyAfter(all, 0, Logged{})
	// The log's mean agrees with pgbench's own "latency average" (0.388 ms).
	var sumUs int64
	for _, e := range all {
		sumUs += e.latUs
	}
	if mean := float64(sumUs) / float64(len(all)) / 1000; math.Abs(mean-sum.LatAvgMs) > 0.001 {
		t.Errorf("log mean %.4f ms, pgbench says %.3f", mean, sum.LatAvgMs)
	}
	p50, p99 := whole.Histogram.Percentile(50), whole.Histogram.Percentile(99)
	if whole.Skipped != 0 || !(p50 > 0.2 && p50 < sum.LatAvgMs && p99 > p50 && whole.MaxMs >= p99) {
		t.Errorf("whole run: p50 %.3f p99 %.3f max %.3f, skipped %d", p50, p99, whole.MaxMs, whole.Skipped)
	}
	// A 1 s warm-up of a 2 s run leaves out about half the transactions, the first ones.
	warm := latencyAfter(all, time.Second, Logged{})
	if n := warm.Histogram.Count(); warm.Skipped+n != sum.Transactions || n < sum.Transactions/3 || n > 2*sum.Transactions/3 {
		t.Errorf("after 1 s: %d kept, %d skipped of %d", n, warm.Skipped, sum.Transactions)
	}
}

func TestReadLogs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Two threads; one transaction failed (PostgreSQL 15 logs "failed" for its time).
	write("tx.10", "0 1 2000 0 100 2000\n0 2 1000 0 100 3000\n")
	write("tx.10.1", "1 1 1500 0 100 1500\n1 2 failed 0 100 4000 0\n1 3 900 0 101 500000\n")
	lg, err := ReadLogs(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if lg.Histogram.Count() != 4 || lg.Failed != 1 || lg.MaxMs != 2 {
		t.Errorf("logged %+v", lg)
	}
	// The run starts with the first transaction (ended at 100.002 s after 2 ms): a 0.5 s
	// warm-up leaves the one that ended at 101.5 s.
	if lg, _ := ReadLogs(dir, 500*time.Millisecond); lg.Histogram.Count() != 1 || lg.Skipped != 3 || lg.MaxMs != 0.9 {
		t.Errorf("after 0.5 s: %+v", lg)
	}
	write("tx.10.2", "1 1 short\n")
	if _, err := ReadLogs(dir, 0); err == nil || !strings.Contains(err.Error(), "tx.10.2") {
		t.Errorf("bad line: err = %v, want the file named", err)
	}
}
