package pgbench

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/stats"
)

// Logged is the latency of the transactions pgbench's per-transaction log (--log) holds,
// from Skip into the run on: a histogram on sysbench's grid and the exact maximum.
type Logged struct {
	Histogram stats.Histogram
	MaxMs     float64
	Skipped   int64 // transactions that ended within Skip: the warm-up
	// Failed counts transactions logged as failed or skipped (no latency).
	Failed int64
}

// logEntry is one transaction of the log: when it ended and how long it took, in µs.
type logEntry struct{ endUs, latUs int64 }

// parseLog reads one per-transaction log file (PostgreSQL 15's format):
//
//	client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]
//
// time is the latency in µs, or "failed" / "skipped" for a transaction without one;
// time_epoch and time_us say when it ended. failed counts those without a latency.
func parseLog(r io.Reader) (entries []logEntry, failed int64, err error) {
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 6 {
			return nil, 0, fmt.Errorf("pgbench log line %d: %d fields, want at least 6: %q", line, len(f), sc.Text())
		}
		lat, errLat := strconv.ParseInt(f[2], 10, 64)
		sec, errSec := strconv.ParseInt(f[4], 10, 64)
		us, errUs := strconv.ParseInt(f[5], 10, 64)
		if errSec != nil || errUs != nil {
			return nil, 0, fmt.Errorf("pgbench log line %d: bad time %q %q", line, f[4], f[5])
		}
		if errLat != nil { // "failed", "skipped"
			failed++
			continue
		}
		entries = append(entries, logEntry{endUs: sec*1_000_000 + us, latUs: lat})
	}
	if err := sc.Err(); err != nil {
		return nil, 0, fmt.Errorf("read pgbench log: %w", err)
	}
	return entries, failed, nil
}

// ReadLogs reads every log file pgbench wrote into dir (one per thread:
// PREFIX.PID, PREFIX.PID.1, ...) and keeps the transactions that ended skip or later
// after the first one started: the log has no start time of its own, and the first
// transaction starts when the run does, within a connection's set-up.
func ReadLogs(dir string, skip time.Duration) (Logged, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		return Logged{}, fmt.Errorf("pgbench logs in %s: %w", dir, err)
	}
	var all []logEntry
	var out Logged
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return Logged{}, fmt.Errorf("pgbench log: %w", err)
		}
		entries, failed, err := parseLog(f)
		f.Close()
		if err != nil {
			return Logged{}, fmt.Errorf("%s: %w", filepath.Base(name), err)
		}
		all, out.Failed = append(all, entries...), out.Failed+failed
	}
	return latencyAfter(all, skip, out), nil
}

// latencyAfter is the histogram and maximum of the entries that ended skip after the
// earliest start.
func latencyAfter(all []logEntry, skip time.Duration, out Logged) Logged {
	start := int64(math.MaxInt64)
	for _, e := range all {
		start = min(start, e.endUs-e.latUs)
	}
	cut := start + skip.Microseconds()
	counts := map[float64]int64{}
	for _, e := range all {
		if e.endUs < cut {
			out.Skipped++
			continue
		}
		ms := float64(e.latUs) / 1000
		counts[stats.BucketOf(ms)]++
		out.MaxMs = math.Max(out.MaxMs, ms)
	}
	buckets := make([]stats.Bucket, 0, len(counts))
	for ms, n := range counts {
		buckets = append(buckets, stats.Bucket{Ms: ms, Count: n})
	}
	out.Histogram = stats.NewHistogram(buckets)
	return out
}
