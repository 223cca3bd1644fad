package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDelayLineCostIsTheLabs: at --rtt 2ms with 32 threads the NFQUEUE delay line releases
// tens of thousands of packets a second, at about 15 µs of CPU each (all of it charged,
// the verdict writes included): well over a tenth of a 2-core machine, whose CPU the
// point fills. The point's CPU verdict is "lab", results.json records the cost that
// decided it, and the report prints that figure and warns.
func TestDelayLineCostIsTheLabs(t *testing.T) {
	skipUnlessRoot(t)
	state, out := t.TempDir(), t.TempDir()
	wl(t, state, "run", "--rtt", "2ms", "--shaper", "nfqueue", "--threads", "32", "--duration", "4s", "--warmup", "1s",
		"--tables", "1", "--table-size", "10000", "--workload", "oltp_read_only", "--out", out)
	run := readRun(t, out)
	if !strings.Contains(run.Environment.Shaper, "nfqueue") {
		t.Fatalf("shaper %q: the point did not run through the delay line", run.Environment.Shaper)
	}
	if len(run.Points) != 1 || run.Points[0].Failed {
		t.Fatalf("want one measured point, got %+v", run.Points)
	}
	p := run.Points[0]
	c := p.LabCost
	if c == nil || c.DelayLinePackets == 0 || c.Cores == 0 {
		t.Fatalf("lab cost %+v, want the delay line's packets and this machine's cores", c)
	}
	t.Logf("%.0f TPS, %s (%s); delay line %.2f s CPU, %.1f µs a packet (verdict writes %.1f), %.1f%% of %d cores",
		p.TPS, p.Bottleneck, p.BottleneckWhy, c.DelayLineCPUS, c.WholeUsPerPacket(), c.VerdictUsPerPacket(), 100*c.MachineShare, c.Cores)
	if c.DelayLineOwnCPUS != c.DelayLineCPUS || c.SubtractedCPUS() != 0 {
		t.Errorf("own %.3f s of %.3f s: part of the delay line's CPU was left out", c.DelayLineOwnCPUS, c.DelayLineCPUS)
	}
	if c.VerdictCPUS <= 0 || c.VerdictCPUS > c.DelayLineCPUS {
		t.Errorf("verdict writes %.3f s of %.3f s: not recorded beside the whole", c.VerdictCPUS, c.DelayLineCPUS)
	}
	if !c.LabBound || c.MachineShare <= 0.10 {
		t.Errorf("the delay line took %.1f%% of the machine (lab bound %v), want over 10%%", 100*c.MachineShare, c.LabBound)
	}
	// As root the delay line holds the CPUs awake, and its stats say so.
	if c.CPUHold == nil || !c.CPUHold.Held {
		t.Errorf("the delay line's CPU hold %+v, want recorded and held", c.CPUHold)
	}
	if p.Bottleneck != "lab" {
		t.Errorf("bottleneck %q (%s), want lab", p.Bottleneck, p.BottleneckWhy)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"of the machine in all", "its verdict writes took", "the lab's own delay line used more than 10% of the machine it ran on",
		"the nfqueue delay line held 0 µs while it ran"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}
