package sysbench

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseSummary(t *testing.T) {
	tests := []struct {
		file string
		want Summary
	}{
		{"ro_plain.txt", Summary{Threads: 4, Read: 45710, Write: 0, Other: 6530,
			Transactions: 3265, TPS: 1086.09, Queries: 52240, QPS: 17377.39,
			TotalTimeS: 3.0048, Events: 3265, LatMin: 0.80, LatAvg: 3.67, LatMax: 80.62,
			LatPct: 8.74, Percentile: 95, LatSum: 11985.65}},
		{"ro_compression.txt", Summary{Threads: 4, Read: 11018, Other: 1574,
			Transactions: 787, TPS: 258.50, Queries: 12592, QPS: 4135.92,
			TotalTimeS: 3.0422, Events: 787, LatMin: 2.50, LatAvg: 15.28, LatMax: 325.44,
			LatPct: 39.65, Percentile: 95, LatSum: 12027.37}},
		{"ro_tls.txt", Summary{Threads: 4, Read: 40530, Other: 5790,
			Transactions: 2895, TPS: 962.56, Queries: 46320, QPS: 15401.04,
			TotalTimeS: 3.0061, Events: 2895, LatMin: 1.25, LatAvg: 4.14, LatMax: 133.27,
			LatPct: 7.17, Percentile: 95, LatSum: 11998.49}},
		{"ro_socket.txt", Summary{Threads: 4, Read: 33068, Other: 4724,
			Transactions: 2362, TPS: 785.33, Queries: 37792, QPS: 12565.36,
			TotalTimeS: 3.0061, Events: 2362, LatMin: 0.61, LatAvg: 5.08, LatMax: 153.30,
			LatPct: 10.27, Percentile: 95, LatSum: 12006.12}},
		{"wo_plain.txt", Summary{Threads: 4, Write: 24466, Other: 12233,
			Transactions: 6116, TPS: 2015.34, Queries: 36699, QPS: 12093.04, Errors: 1,
			TotalTimeS: 3.0242, Events: 6116, LatMin: 0.18, LatAvg: 1.97, LatMax: 110.70,
			LatPct: 5.18, Percentile: 95, LatSum: 12068.95}},
		{"rw_rate_p99.txt", Summary{Threads: 4, Read: 8652, Write: 2472, Other: 1236,
			Transactions: 618, TPS: 205.02, Queries: 12360, QPS: 4100.36,
			TotalTimeS: 3.0129, Events: 618, LatMin: 1.33, LatAvg: 6.85, LatMax: 120.46,
			LatPct: 34.33, Percentile: 99, LatSum: 4231.70}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := ParseSummary(readTestdata(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ParseSummary:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseSummaryFailures(t *testing.T) {
	tests := []struct {
		file, wantInErr string
	}{
		{"err_password.txt", "unable to connect to MySQL server on host '127.0.0.1', port 33306"},
		{"ro_tls_nocerts.txt", "unable to connect"},
		{"prepare.txt", ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := ParseSummary(readTestdata(t, tt.file))
			if !errors.Is(err, ErrNoSummary) {
				t.Fatalf("err = %v, want ErrNoSummary", err)
			}
			if !strings.Contains(err.Error(), tt.wantInErr) {
				t.Errorf("err %q does not contain %q", err, tt.wantInErr)
			}
		})
	}
}

func TestFatalLines(t *testing.T) {
	got := FatalLines(readTestdata(t, "err_password.txt"))
	want := []string{
		"unable to connect to MySQL server on host '127.0.0.1', port 33306, aborting...",
		"error 1045: Access denied for user 'sbtest'@'127.0.0.1' (using password: YES)",
		"`thread_init' function failed: /usr/share/sysbench/oltp_common.lua:349: connection creation failed",
		"Thread initialization failed!",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("FatalLines:\n got %q\nwant %q", got, want)
	}
	tls := FatalLines(readTestdata(t, "ro_tls_nocerts.txt"))
	if len(tls) < 2 || tls[1] != "error 2026: TLS/SSL error: No such file or directory (2)" {
		t.Errorf("TLS without cert files: got %q", tls)
	}
}

func TestParseIntervalFromCaptures(t *testing.T) {
	tests := []struct {
		file  string
		n     int
		first Interval
		last  Interval
	}{
		{"ro_plain.txt", 3,
			Interval{T: 1, Threads: 4, TPS: 587.25, QPS: 9435.83, Read: 8258.34, Write: 0, Other: 1177.48, LatPct: 21.11, Percentile: 95},
			Interval{T: 3, Threads: 4, TPS: 1467.08, QPS: 23466.23, Read: 20535.08, Other: 2931.16, LatPct: 3.25, Percentile: 95}},
		{"wo_plain.txt", 3,
			Interval{T: 1, Threads: 4, TPS: 1679.54, QPS: 10093.20, Write: 6730.13, Other: 3363.07, LatPct: 11.45, Percentile: 95},
			Interval{T: 3, Threads: 3, TPS: 1989.43, QPS: 11940.54, Write: 7960.69, Other: 3979.85, LatPct: 5.28, Percentile: 95, Errors: 0.99}},
		// --rate adds "[ 1s ] queue length: 0, concurrency: 1" lines: not intervals.
		{"rw_rate_p99.txt", 3,
			Interval{T: 1, Threads: 4, TPS: 192.62, QPS: 3871.29, Read: 2710.60, Write: 774.46, Other: 386.23, LatPct: 41.10, Percentile: 99},
			Interval{T: 3, Threads: 4, TPS: 210.01, QPS: 4218.12, Read: 2954.09, Write: 843.02, Other: 421.01, LatPct: 24.38, Percentile: 99}},
		{"err_password.txt", 0, Interval{}, Interval{}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var got []Interval
			for _, l := range strings.Split(readTestdata(t, tt.file), "\n") {
				if iv, ok := ParseInterval(l); ok {
					got = append(got, iv)
				}
			}
			if len(got) != tt.n {
				t.Fatalf("got %d intervals, want %d: %+v", len(got), tt.n, got)
			}
			if tt.n == 0 {
				return
			}
			if got[0] != tt.first {
				t.Errorf("first:\n got %+v\nwant %+v", got[0], tt.first)
			}
			if got[len(got)-1] != tt.last {
				t.Errorf("last:\n got %+v\nwant %+v", got[len(got)-1], tt.last)
			}
		})
	}
}

func TestParseIntervalRejects(t *testing.T) {
	for _, l := range []string{
		"",
		"[ 1s ] queue length: 0, concurrency: 1",
		"Threads started!",
		"    transactions:                        3265   (1086.09 per sec.)",
		"FATAL: unable to connect to MySQL server on host '127.0.0.1', port 33306, aborting...",
	} {
		if iv, ok := ParseInterval(l); ok {
			t.Errorf("ParseInterval(%q) = %+v, true; want false", l, iv)
		}
	}
	// The example line of the brief, with a reconnect rate and a larger thread count.
	iv, ok := ParseInterval("[ 12s ] thds: 2048 tps: 1184.93 qps: 18978.86 (r/w/o: 16607.01/0.00/2371.85) lat (ms,95%): 9.39 err/s: 1.50 reconn/s: 2.00")
	want := Interval{T: 12, Threads: 2048, TPS: 1184.93, QPS: 18978.86, Read: 16607.01, Other: 2371.85,
		LatPct: 9.39, Percentile: 95, Errors: 1.5, Reconnects: 2}
	if !ok || iv != want {
		t.Errorf("got %+v %v, want %+v", iv, ok, want)
	}
}
