package tunnel

import (
	"fmt"

	"github.com/wirelab/wirelab/internal/stats"
)

// The tunnel's targets, in one place: `wirelab tunnel goals` prints them, Goal.Judge reads
// every measurement of them (the bench's rounds, the replication study's points) with the
// replication study's interval rule, and docs/tunnel.md and README.md quote the rows and
// the verdicts (a test holds them to goals.go and to docs/bench/tunnel-goals.json).
const (
	// GoalOverSocat: unshaped, TPS through the tunnel ÷ through two socat hops, at 2 and at
	// 32 threads: a WAN channel must not cost a LAN user more than the plainest relay.
	GoalOverSocat = 1.0
	// GoalOverCompression: 20 Mbit, 32 threads, 60 s points, TPS through the tunnel ÷ with
	// MySQL protocol compression.
	GoalOverCompression = 2.5
	// GoalReplicationLoad: 2 Mbit / 250 ms, the maximum sustainable load through the tunnel ÷
	// native replication's, at least (DTLE's report: 1.96).
	GoalReplicationLoad = 4.0
	// GoalReplicationWire: wire bytes per query at equal load, tunnel ÷ native, at most (DTLE: ~1/3).
	GoalReplicationWire = 0.30
	// GoalReplicationP99SlackS: the p99 lag at a sustainable load is at most the RTT plus
	// this many seconds.
	GoalReplicationP99SlackS = 1.0
)

// Goal is one target as the documents quote it.
type Goal struct {
	Key     string  // short name, the first column of `wirelab tunnel goals --tsv`
	Measure string  // what is measured, and where
	AtLeast bool    // the figure must reach Value (else stay at or below it)
	Value   float64 // the threshold
	Unit    string  // "×", or " s" for seconds
	Where   string  // the command that measures it
}

// Goals are the tunnel's targets, in the order the documents list them.
func Goals() []Goal {
	return []Goal{
		{"over-socat", "TPS, tunnel ÷ two socat hops, unshaped, 2 and 32 threads", true, GoalOverSocat, "×", "make bench-tunnel"},
		{"over-compression", "TPS, tunnel ÷ MySQL protocol compression, 20 Mbit, 32 threads, 60 s points", true, GoalOverCompression, "×", "make bench-tunnel"},
		{"replication-load", "maximum sustainable replication load, tunnel ÷ native, 2 Mbit / 250 ms", true, GoalReplicationLoad, "×", "wirelab study replication --quick"},
		{"replication-wire", "wire bytes per query at equal load, tunnel ÷ native, no rate cap, 250 ms", false, GoalReplicationWire, "×", "wirelab study replication --quick"},
		{"replication-p99-lag", "tunnel p99 replication lag at a sustainable load, over the RTT", false, GoalReplicationP99SlackS, " s", "wirelab study replication --quick"},
	}
}

// GoalByKey is the goal named key, false when there is none.
func GoalByKey(key string) (Goal, bool) {
	for _, g := range Goals() {
		if g.Key == key {
			return g, true
		}
	}
	return Goal{}, false
}

// verdict reads the range [lo, hi] a figure lies in against the goal, by the rule every
// goal of wirelab is judged with (stats.AtLeast, stats.AtMost): met when the whole range
// clears it, missed when the whole range falls short, not shown otherwise or without a
// range.
func (g Goal) verdict(lo, hi float64, bounded bool) stats.GoalVerdict {
	if g.AtLeast {
		return stats.AtLeast(lo, hi, g.Value, bounded)
	}
	return stats.AtMost(lo, hi, g.Value, bounded)
}

// Bound is the goal's threshold with its comparison, "≥ 2.5×".
func (g Goal) Bound() string {
	op := "≤"
	if g.AtLeast {
		op = "≥"
	}
	return fmt.Sprintf("%s %s%s", op, g.Threshold(), g.Unit)
}

// Threshold is the value as the documents write it: "1.0", "2.5", "0.30".
func (g Goal) Threshold() string {
	digits := 1
	if g.Value < 1 {
		digits = 2
	}
	return fmt.Sprintf("%.*f", digits, g.Value)
}

// Row is the goal as a markdown table row, the form the documents quote verbatim.
func (g Goal) Row() string {
	return fmt.Sprintf("| %s | %s | %s | `%s` |", g.Key, g.Measure, g.Bound(), g.Where)
}
