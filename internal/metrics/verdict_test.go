package metrics

import (
	"math"
	"strings"
	"testing"
)

func TestVerdict(t *testing.T) {
	tests := []struct {
		name    string
		in      VerdictInput
		verdict string
		why     []string // substrings of why
	}{
		{"up saturated", VerdictInput{UpUtil: 0.97, DownUtil: 0.1, CPUServer: 1.9, CPUs: 2, RateBps: 20_000_000},
			"network", []string{"up 0.97 of 20mbit"}},
		{"down saturated", VerdictInput{UpUtil: 0.2, DownUtil: 0.93, CPUs: 2, RateBps: 1_500_000},
			"network", []string{"down 0.93 of 1.5mbit", "up 0.20"}},
		{"exactly 0.9 is saturated", VerdictInput{UpUtil: 0.9, CPUs: 2}, "network", []string{"of the link rate"}},
		{"just below", VerdictInput{UpUtil: 0.89, CPUServer: 0.5, CPUClient: 0.3, CPUTotal: 0.9, CPUs: 2, RateBps: 20_000_000},
			"latency", []string{"up 0.89", "of 20mbit", "server 0.50", "of 2 cores"}},
		{"mysqld alone", VerdictInput{CPUServer: 1.85, CPUClient: 0.1, CPUTotal: 1.95, CPUs: 2},
			"server-cpu", []string{"server 1.85 of 2 cores"}},
		{"client alone", VerdictInput{CPUServer: 0.1, CPUClient: 1.7, CPUTotal: 1.8, CPUs: 2},
			"client-cpu", []string{"client 1.70 of 2 cores"}},
		{"shared box, server larger", VerdictInput{CPUServer: 1.0, CPUClient: 0.85, CPUTotal: 1.9, CPUs: 2},
			"server-cpu", []string{"machine 1.90 of 2 cores busy", "server 1.00 > client 0.85"}},
		{"shared box, client larger", VerdictInput{CPUServer: 0.7, CPUClient: 1.1, CPUTotal: 1.85, CPUs: 2},
			"client-cpu", []string{"client 1.10 > server 0.70"}},
		{"machine busy at 0.89", VerdictInput{CPUServer: 0.9, CPUClient: 0.8, CPUTotal: 1.78, CPUs: 2},
			"latency", []string{"link unlimited", "machine 1.78 of 2 cores"}},
		{"one core of eight is not saturation", VerdictInput{CPUServer: 1.0, CPUClient: 0.9, CPUTotal: 2.0, CPUs: 8},
			"latency", nil},
		{"both over 0.8 by noise: larger wins", VerdictInput{CPUServer: 1.6, CPUClient: 1.7, CPUTotal: 2, CPUs: 2},
			"client-cpu", nil},
		{"network beats cpu", VerdictInput{DownUtil: 0.95, CPUServer: 2, CPUTotal: 2, CPUs: 2}, "network", nil},
		{"cpus unknown", VerdictInput{CPUServer: 4, CPUTotal: 4}, "latency", []string{"cpu count unknown"}},
		// An existing server: its CPU is not a reading, so it is never blamed from a 0 and
		// "latency" cannot be claimed either.
		{"external: busy machine, client smaller", VerdictInput{CPUClient: 0.6, CPUTotal: 1.9, CPUs: 2, ServerCPUUnknown: true},
			LatencyOrServer, []string{"client 0.60", "machine 1.90 of 2 cores", "server CPU not measured"}},
		{"external: busy machine, client larger", VerdictInput{CPUClient: 1.2, CPUTotal: 1.9, CPUs: 2, ServerCPUUnknown: true},
			"client-cpu", []string{"client 1.20 >= the rest 0.70", "server CPU not measured"}},
		{"external: client alone", VerdictInput{CPUClient: 1.7, CPUTotal: 1.75, CPUs: 2, ServerCPUUnknown: true},
			"client-cpu", []string{"client 1.70 of 2 cores"}},
		{"external: nothing seen saturated", VerdictInput{UpUtil: 0.3, CPUClient: 0.2, CPUTotal: 0.4, CPUs: 2, RateBps: 20_000_000, ServerCPUUnknown: true},
			LatencyOrServer, []string{"up 0.30", "of 20mbit", "round trips or the server"}},
		{"external: the link still wins", VerdictInput{DownUtil: 0.97, CPUTotal: 2, CPUs: 2, RateBps: 20_000_000, ServerCPUUnknown: true},
			"network", nil},
		// Separate hosts: each side against its own host's cores. The same readings that
		// saturate a 2-core shared box leave a 48-core server host idle.
		{"hosts: 1.9 cores of a 48-core server is not saturation", VerdictInput{CPUServer: 1.9, CPUClient: 0.3, CPUTotal: 2.1,
			CPUs: 48, ServerCPUs: 48, ClientCPUs: 4}, "latency", []string{"server 1.90", "of 48 server-host cores", "client 0.30 of 4 client-host cores"}},
		{"hosts: a 4-core client saturates beside a 48-core server", VerdictInput{CPUServer: 6, CPUClient: 3.5, CPUTotal: 7,
			CPUs: 48, ServerCPUs: 48, ClientCPUs: 4}, "client-cpu", []string{"client 3.50 of 4 client-host cores", "server 6.00 of 48"}},
		{"hosts: the server's own cores", VerdictInput{CPUServer: 3.3, CPUClient: 1, CPUTotal: 3.5, CPUs: 4, ServerCPUs: 4, ClientCPUs: 48},
			"server-cpu", []string{"server 3.30 of 4 server-host cores"}},
		{"hosts: a busy server host", VerdictInput{CPUServer: 2.5, CPUClient: 1, CPUTotal: 3.7, CPUs: 4, ServerCPUs: 4, ClientCPUs: 48},
			"server-cpu", []string{"server host 3.70 of 4 server-host cores busy"}},
		{"hosts: both saturated, the larger share of its own host", VerdictInput{CPUServer: 3.3, CPUClient: 1.9, CPUTotal: 3.4,
			CPUs: 4, ServerCPUs: 4, ClientCPUs: 2}, "client-cpu", []string{"client 1.90 of 2 client-host cores"}},
		{"hosts: external server, client idle", VerdictInput{CPUClient: 1, CPUTotal: 0, CPUs: 48, ServerCPUs: 48, ClientCPUs: 4,
			ServerCPUUnknown: true}, LatencyOrServer, []string{"client 1.00 of 4 client-host cores"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, why := Verdict(tc.in)
			if v != tc.verdict {
				t.Errorf("verdict %q (%s), want %q", v, why, tc.verdict)
			}
			for _, w := range tc.why {
				if !strings.Contains(why, w) {
					t.Errorf("why %q lacks %q", why, w)
				}
			}
		})
	}
}

func TestUtilization(t *testing.T) {
	tests := []struct {
		bytesPerS float64
		rate      int64
		want      float64
	}{
		{2_500_000, 20_000_000, 1},
		{1_250_000, 20_000_000, 0.5},
		{1e9, 0, 0},  // unlimited
		{1e9, -1, 0}, // nonsense rate
		{0, 1_000_000, 0},
	}
	for _, tc := range tests {
		if got := Utilization(tc.bytesPerS, tc.rate); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Utilization(%v, %d) = %v, want %v", tc.bytesPerS, tc.rate, got, tc.want)
		}
	}
}

func TestVerdictNamesTheLabWhenItsDelayLineBoundsTheCPU(t *testing.T) {
	in := VerdictInput{CPUServer: 1.1, CPUClient: 0.6, CPUTotal: 1.95, CPUs: 2, LabBound: true, LabShare: 0.14}
	v, why := Verdict(in)
	if v != LabBound || !strings.Contains(why, "delay line used 14% of the machine") || !strings.Contains(why, "server 1.10") {
		t.Errorf("Verdict = %q, %q; want lab, naming the delay line's share and the server's CPU", v, why)
	}
	// Not CPU-bound: the lab's cost does not change a latency or network verdict.
	in.CPUTotal, in.CPUServer, in.CPUClient = 0.9, 0.5, 0.2
	if v, _ := Verdict(in); v != "latency" {
		t.Errorf("Verdict of a machine half busy = %q, want latency", v)
	}
	in.UpUtil = 0.95
	if v, _ := Verdict(in); v != "network" {
		t.Errorf("Verdict of a full link = %q, want network", v)
	}
}

// On separate hosts a delay line on the client's host bounds only the client side: a
// CPU-bound server is still the server's.
func TestVerdictLabOnClientHost(t *testing.T) {
	in := VerdictInput{CPUServer: 1.9, CPUClient: 0.3, CPUTotal: 1.95, CPUs: 2, ServerCPUs: 2, ClientCPUs: 2,
		LabBound: true, LabShare: 0.2, LabOnClientHost: true}
	if v, _ := Verdict(in); v != "server-cpu" {
		t.Errorf("Verdict with the server's host full = %q, want server-cpu", v)
	}
	in.CPUServer, in.CPUTotal, in.CPUClient = 0.5, 0.6, 1.8
	if v, why := Verdict(in); v != LabBound || !strings.Contains(why, "20% of the client's host") {
		t.Errorf("Verdict with the client's host full = %q, %q; want lab, naming the client's host", v, why)
	}
}
