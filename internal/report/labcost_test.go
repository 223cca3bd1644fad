package report

import (
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/result"
)

func TestLabCostRowAndCallout(t *testing.T) {
	pts := []result.Point{
		{Study: "run", Series: "unlimited", Threads: 1},
		{Study: "run", Series: "rtt-2ms", Threads: 1, LabCost: &result.LabCost{DelayLinePackets: 9000, OwnUsPerPacket: 3.2, MachineShare: 0.011}},
		{Study: "run", Series: "rtt-2ms", Threads: 32, LabCost: &result.LabCost{DelayLinePackets: 400000, OwnUsPerPacket: 4.9,
			MachineShare: 0.134, LabBound: true}},
	}
	row, ok := labCostRow(pts)
	if !ok || !strings.Contains(row[1], "3.2–4.9 µs of CPU per packet") || !strings.Contains(row[1], "1.1%–13.4% of the machine") ||
		!strings.Contains(row[1], "most at rtt-2ms, 32 threads") {
		t.Errorf("lab cost row %q, %v", row, ok)
	}
	c, ok := labBoundCallout(pts).(Callout)
	if !ok || !strings.Contains(c.Text, "more than 10% of the machine on 1 point(s): run/rtt-2ms at 32 threads (13%)") {
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
