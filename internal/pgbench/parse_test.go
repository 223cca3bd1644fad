package pgbench

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func fixture(t *testing.T, name string) string {
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
		{"select_only.stdout", Summary{ClientVersion: "15.18 (Debian 15.18-0+deb12u1)", TransactionType: "<builtin: select only>",
			Scale: 1, QueryMode: "simple", Clients: 2, Threads: 2, Duration: 3 * time.Second, Transactions: 161480,
			LatAvgMs: 0.037, LatStddevMs: 0.184, HasStddev: true, InitialConnMs: 10.568, TPS: 53938.895529}},
		{"tpcb.stdout", Summary{ClientVersion: "15.18 (Debian 15.18-0+deb12u1)", TransactionType: "<builtin: TPC-B (sort of)>",
			Scale: 1, QueryMode: "simple", Clients: 2, Threads: 2, Duration: 3 * time.Second, Transactions: 24857,
			LatAvgMs: 0.240, LatStddevMs: 0.196, HasStddev: true, InitialConnMs: 11.143, TPS: 8312.641187}},
		{"select_only_rate.stdout", Summary{ClientVersion: "15.18 (Debian 15.18-0+deb12u1)", TransactionType: "<builtin: select only>",
			Scale: 1, QueryMode: "simple", Clients: 2, Threads: 1, Duration: 3 * time.Second, Transactions: 615,
			LatAvgMs: 0.301, LatStddevMs: 0.371, HasStddev: true, LagAvgMs: 0.117, LagMaxMs: 3.096,
			InitialConnMs: 9.792, TPS: 205.392368}},
		// -t without -P: no duration, "400/400" processed, no stddev line.
		{"tpcb_transactions.stdout", Summary{ClientVersion: "15.18 (Debian 15.18-0+deb12u1)", TransactionType: "<builtin: TPC-B (sort of)>",
			Scale: 1, QueryMode: "simple", Clients: 2, Threads: 1, Transactions: 400,
			LatAvgMs: 0.498, InitialConnMs: 59.744, TPS: 4014.331162}},
		{"select_only_tls.stdout", Summary{ClientVersion: "15.18 (Debian 15.18-0+deb12u1)", TransactionType: "<builtin: select only>",
			Scale: 1, QueryMode: "simple", Clients: 2, Threads: 2, Duration: 2 * time.Second, Transactions: 30298,
			LatAvgMs: 0.131, LatStddevMs: 0.518, HasStddev: true, InitialConnMs: 27.526, TPS: 15279.271065}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := ParseSummary(fixture(t, tt.file))
			if err != nil || got != tt.want {
				t.Errorf("ParseSummary:\n got %+v, %v\nwant %+v", got, err, tt.want)
			}
		})
	}
	for _, file := range []string{"aborted.stdout", "nodb.stdout", "badpass.stdout", "init.stdout"} {
		if _, err := ParseSummary(fixture(t, file)); !errors.Is(err, ErrNoSummary) {
			t.Errorf("%s: err = %v, want ErrNoSummary", file, err)
		}
	}
}

func TestParseProgress(t *testing.T) {
	tests := []struct {
		file string
		want []Progress
	}{
		{"select_only.stderr", []Progress{{T: 1, TPS: 50985.6, LatAvgMs: 0.039, LatStddevMs: 0.174},
			{T: 2, TPS: 53289.9, LatAvgMs: 0.037, LatStddevMs: 0.222}}},
		{"select_only_rate.stderr", []Progress{{T: 1, TPS: 205, LatAvgMs: 0.191, LatStddevMs: 0.057, LagMs: 0.092},
			{T: 2, TPS: 211, LatAvgMs: 0.222, LatStddevMs: 0.125, LagMs: 0.099},
			{T: 3, TPS: 198.2, LatAvgMs: 0.498, LatStddevMs: 0.589, LagMs: 0.163}}},
		{"tpcb.stderr", []Progress{{T: 1, TPS: 7007.7, LatAvgMs: 0.282, LatStddevMs: 0.307},
			{T: 2, TPS: 8474, LatAvgMs: 0.236, LatStddevMs: 0.164}}},
		{"aborted.stderr", nil},
		{"init.stderr", nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var got []Progress
			for _, l := range strings.Split(fixture(t, tt.file), "\n") {
				if p, ok := ParseProgress(l); ok {
					got = append(got, p)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d progress lines %+v, want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("line %d: got %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
	if p, ok := ParseProgress("progress: 4.0 s, 12.0 tps, lat 80.100 ms stddev 2.000, 3 failed"); !ok || p.Failed != 3 {
		t.Errorf("failed count: %+v, %v", p, ok)
	}
}

func TestClassify(t *testing.T) {
	base := errors.New("exit status 1")
	tests := []struct {
		file   string
		want   error
		reason string
	}{
		{"badpass.stderr", ErrConnect, `password authentication failed for user "postgres"`},
		{"nodb.stderr", ErrNotInitialised, `relation "pgbench_branches" does not exist`},
		{"aborted.stderr", ErrAborted, "division by zero"},
	}
	for _, tt := range tests {
		err := classify(base, fixture(t, tt.file))
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.reason) {
			t.Errorf("%s: %v; want %v naming %q", tt.file, err, tt.want, tt.reason)
		}
	}
}

func TestParseVersion(t *testing.T) {
	if v, err := parseVersion(fixture(t, "version.stdout")); err != nil || v != "15.18 (Debian 15.18-0+deb12u1)" {
		t.Errorf("parseVersion = %q, %v", v, err)
	}
	if _, err := parseVersion("bash: pgbench: not found"); err == nil {
		t.Error("garbage accepted")
	}
}
