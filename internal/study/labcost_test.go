package study

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/wirelab/wirelab/internal/link"
)

// fixtureLine is a delay line whose stats file reads as each of files in turn (the last
// one from then on).
func fixtureLine(t *testing.T, host string, files ...string) DelayLine {
	t.Helper()
	var snaps []link.DelayerStats
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		st, err := link.ParseDelayerStats(f, b)
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, st)
	}
	i := 0
	return DelayLine{Host: host, Read: func(context.Context) (link.DelayerStats, error) {
		st := snaps[min(i, len(snaps)-1)]
		i++
		return st, nil
	}}
}

// A point whose delay line took 12% of a 2-core machine in all (2.4 s of CPU over 10 s,
// 15 µs a packet) is lab-bound. Half of that CPU went to the accepting verdict writes
// (7.5 µs a packet in the sample), which the cost shows and does not subtract: charged
// only the rest, scaled by every packet received, the point read 6% and escaped the flag.
func TestLabCostFlagsTheWholeCPU(t *testing.T) {
	ctx := context.Background()
	l := fixtureLine(t, "", "testdata/delayer-before.json", "testdata/delayer-after.json")
	st, _ := l.Read(ctx)
	costs := labCosts(ctx, []delayLineMark{{line: l, st: st, ok: true}}, func(string) int { return 2 })
	if len(costs) != 1 {
		t.Fatalf("%d costs, want 1", len(costs))
	}
	c := costs[0]
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9*max(1, want) }
	if !near(c.DelayLineCPUS, 2.4) || !near(c.DelayLineOwnCPUS, 2.4) || c.SubtractedCPUS() != 0 ||
		c.DelayLinePackets != 160_000 || c.DelayLineAccepted != 159_000 || !near(c.OwnUsPerPacket, 15) || c.Cores != 2 {
		t.Errorf("cost %+v: want all 2.4 s charged, 160000 packets (159000 released), 15 µs a packet on 2 cores", c)
	}
	// The sample: 150 ms over 20,000 packets, 7.5 µs each, times the 159,000 released
	// (not the 1,000 dropped on overflow).
	if !near(c.VerdictCPUS, 1.1925) || !near(c.VerdictUsPerPacket(), 7.5) {
		t.Errorf("verdict writes %.4f s (%.2f µs a packet), want 1.1925 s (7.5 µs)", c.VerdictCPUS, c.VerdictUsPerPacket())
	}
	if !near(c.MachineShare, 0.12) || !near(c.WholeShare(), 0.12) || !c.LabBound {
		t.Errorf("share %.4f, lab bound %v: want 0.12 of the machine, flagged", c.MachineShare, c.LabBound)
	}
	if c.CPUHold == nil || !c.CPUHold.Held {
		t.Errorf("CPU hold %+v, want the delay line's own, held, as its stats recorded it", c.CPUHold)
	}
	if old := (c.DelayLineCPUS - 7.5e-6*float64(c.DelayLinePackets)) / 20; !near(old, 0.06) {
		t.Errorf("the fixture's reduced figure is %.3f, want 0.06: it no longer shows what the whole CPU catches", old)
	}

	// On a 4-core client host of its own the same cost is 6%: not lab-bound, and named.
	l = fixtureLine(t, "c1", "testdata/delayer-before.json", "testdata/delayer-after.json")
	st, _ = l.Read(ctx)
	costs = labCosts(ctx, []delayLineMark{{line: l, st: st, ok: true}}, func(h string) int { return map[string]int{"c1": 4}[h] })
	if len(costs) != 1 || costs[0].Host != "c1" || !near(costs[0].MachineShare, 0.06) || costs[0].LabBound {
		t.Errorf("cost on c1 %+v: want 6%% of its 4 cores, not lab-bound", costs[0])
	}
}

// Of several delay lines (one per client host) the point's cost is the one that took the
// largest share of its machine; an unreadable or restarted one gives none.
func TestLabCostsLargestShareFirst(t *testing.T) {
	ctx := context.Background()
	var marks []delayLineMark
	for _, h := range []string{"c1", "c2", "c3"} {
		l := fixtureLine(t, h, "testdata/delayer-before.json", "testdata/delayer-after.json")
		st, _ := l.Read(ctx)
		marks = append(marks, delayLineMark{line: l, st: st, ok: h != "c3"})
	}
	cores := map[string]int{"c1": 8, "c2": 2, "c3": 2}
	costs := labCosts(ctx, marks, func(h string) int { return cores[h] })
	if len(costs) != 2 || costs[0].Host != "c2" || costs[1].Host != "c1" || !costs[0].LabBound || costs[1].LabBound {
		t.Errorf("costs %+v %+v: want c2's (12%%, lab-bound) first, then c1's (3%%)", costs[0], costs[len(costs)-1])
	}
}
