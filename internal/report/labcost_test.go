package report

import (
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/result"
)

// labCost is a point's delay line cost as the study records it: all of cpuS charged, the
// verdict writes verdictS of it, over pkts packets (all released) on 2 cores for 10 s.
func labCost(cpuS, verdictS float64, pkts int64) *result.LabCost {
	share := cpuS / 20
	return &result.LabCost{DelayLineCPUS: cpuS, DelayLineOwnCPUS: cpuS, VerdictCPUS: verdictS, DelayLinePackets: pkts,
		DelayLineAccepted: pkts, OwnUsPerPacket: cpuS * 1e6 / float64(pkts), MachineShare: share, Cores: 2,
		LabBound: result.IsLabBound(share)}
}

func TestLabCostRowAndCallout(t *testing.T) {
	pts := []result.Point{
		{Study: "run", Series: "unlimited", Threads: 1},
		{Study: "run", Series: "rtt-2ms", Threads: 1, LabCost: labCost(0.2, 0.09, 20_000)},
		{Study: "run", Series: "rtt-2ms", Threads: 32, LabCost: labCost(2.68, 1.3, 180_000)},
	}
	row, ok := labCostRow(pts)
	for _, want := range []string{"10.0–14.9 µs of CPU per packet", "1.0%–13.4% of the machine in all (most at rtt-2ms, 32 threads)",
		"all of it is charged to the lab, and a point where it passed 10% is flagged `lab`",
		"its verdict writes took 4.5–7.2 µs per packet released", "none of it is subtracted", "measured on 2 point(s)"} {
		if !ok || !strings.Contains(row[1], want) {
			t.Errorf("lab cost row lacks %q: %q", want, row[1])
		}
	}
	if strings.Contains(row[1], "were written when") || !strings.Contains(row[1], "charged to the lab") {
		t.Errorf("results that charge all of the CPU told they subtracted some: %q", row[1])
	}
	c, ok := labBoundCallout(pts).(Callout)
	if !ok || !strings.Contains(c.Text, "On 1 point(s) the lab's own delay line used more than 10% of the machine it ran on: run/rtt-2ms at 32 threads (13%)") {
		t.Errorf("callout %+v", labBoundCallout(pts))
	}
	if strings.Contains(row[1], "fidelity") {
		t.Errorf("points without release lateness got a fidelity sentence: %q", row[1])
	}
	pts[1].LabCost.ReleaseLateMeanUs, pts[1].LabCost.ReleaseLateP99Us = 4.2, 20
	pts[2].LabCost.ReleaseLateMeanUs, pts[2].LabCost.ReleaseLateP99Us = 31.5, 200
	if row, _ := labCostRow(pts); !strings.Contains(row[1], "each release left 4.2–31.5 µs after it was due on average (99th percentile ≤ 200 µs") {
		t.Errorf("lab cost row without the release lateness: %q", row[1])
	}
	pts[1].LabCost.ReleaseLateP99Us = -1
	if row, _ := labCostRow(pts); !strings.Contains(row[1], "99th percentile above 5 ms") {
		t.Errorf("a p99 beyond the histogram: %q", row[1])
	}
	if _, ok := labCostRow(pts[:1]); ok || labBoundCallout(pts[:2]) != nil {
		t.Error("a run without a lab-bound point got a row or a callout")
	}
}

// A result written when an estimate of delivery was subtracted is shown with all of its
// CPU, and the row says what was subtracted and what its flag was decided on; a delay
// line on a client host is named, its share of that host's cores.
func TestLabCostRowOlderAndHosts(t *testing.T) {
	old := []result.Point{{Study: "run", Series: "rtt-2ms", Threads: 32, LabCost: &result.LabCost{DelayLineCPUS: 2.4,
		DelayLineOwnCPUS: 1.2, DelayLinePackets: 160_000, OwnUsPerPacket: 7.5, MachineShare: 0.06}}}
	row, _ := labCostRow(old)
	for _, want := range []string{"15.0 µs of CPU per packet and 12.0% of the machine in all",
		"1 point(s) were written when an estimate of the packets' delivery into the receiving stack was subtracted (1.20 s of CPU): their `lab` flag was decided on the rest, 6.0% of the machine"} {
		if !strings.Contains(row[1], want) {
			t.Errorf("older result's row lacks %q: %q", want, row[1])
		}
	}
	if strings.Contains(row[1], "all of it is charged") {
		t.Errorf("an older result's flag said to be decided on all of the CPU: %q", row[1])
	}
	hosts := []result.Point{{Study: "run", Series: "rtt-2ms", Threads: 32, LabCost: labCost(2.4, 1.1, 160_000)}}
	hosts[0].LabCost.Host = "c1"
	row, _ = labCostRow(hosts)
	if !strings.Contains(row[1], "the delay line (on c1) used 15.0 µs of CPU per packet and 12.0% of its host in all") ||
		strings.Contains(row[1], "predict") {
		t.Errorf("a client host's delay line: %q", row[1])
	}
}
