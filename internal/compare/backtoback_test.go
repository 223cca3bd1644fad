package compare

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/wirelab/wirelab/internal/nstest"
	"github.com/wirelab/wirelab/internal/result"
)

// backToBack holds the real runs scripts/compare-fixture.sh makes: rounds of three
// `wirelab run` points back to back on a quiet machine (A at 20mbit, A again, B at
// 18mbit), 60 s each, one thread count, only what compare reads of each results.json.
const backToBack = "testdata/back-to-back"

// The done-when of compare on independent units, on real runs: two 60 s runs of the same
// build read "~" in at least 9 of 10 pairs run back to back, and a real 10% change is
// called in at least 9 of 10.
func TestBackToBackRuns(t *testing.T) {
	rounds, _ := filepath.Glob(filepath.Join(backToBack, "round-*"))
	if len(rounds) == 0 {
		nstest.Unavailable(t, "no real runs in %s: scripts/compare-fixture.sh makes them (root, jq, a quiet machine, about an hour)", backToBack)
	}
	if len(rounds) < 10 {
		t.Fatalf("%d rounds in %s, want 10: run scripts/compare-fixture.sh again", len(rounds), backToBack)
	}
	same, called := 0, 0
	for _, dir := range rounds {
		a, a2, b := readRun(t, dir, "a"), readRun(t, dir, "a2"), readRun(t, dir, "b")
		checkFixtureRun(t, dir, a, a2, b)

		c, err := Compare([]Input{{Name: "a", Run: a}, {Name: "a2", Run: a2}}, defaultMargin)
		if err != nil {
			t.Fatalf("%s: a against a2: %v", dir, err)
		}
		if nothingCalled(c) {
			same++
		} else {
			t.Logf("%s: a2 against a called a change:\n%s", dir, textOf(t, c))
		}

		// B ran at 18mbit so that it is a real 10% change of a bandwidth-bound point, and
		// compare pairs points by their link: a run at another rate has no match. The test
		// poses its question, "is B different from A?", by filing B's points under A's
		// rate; workload, threads, build and duration are the same.
		for i := range b.Points {
			b.Points[i].LinkRateBps = a.Points[0].LinkRateBps
		}
		c, err = Compare([]Input{{Name: "a", Run: a}, {Name: "b", Run: b}}, defaultMargin)
		if err != nil {
			t.Fatalf("%s: a against b: %v", dir, err)
		}
		if ch := tpsChange(t, c); ch.Significant && ch.Verdict == "worse" {
			called++
		} else {
			t.Logf("%s: b against a not called worse (%+v):\n%s", dir, ch, textOf(t, c))
		}
	}
	t.Logf("%d rounds: a2 against a \"~\" in %d, b against a called worse in %d", len(rounds), same, called)
	if want := len(rounds) * 9 / 10; same < want || called < want {
		t.Errorf("\"~\" for the same build in %d of %d, the 10%% change called in %d: want at least %d each",
			same, len(rounds), called, want)
	}
}

func readRun(t *testing.T, round, name string) *result.Run {
	t.Helper()
	r, err := result.Read(filepath.Join(round, name))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkFixtureRun fails the test on a fixture that is not what the script makes: one
// point a run, run once for 60 s with the machine to itself, at one thread count, A and A'
// at one rate, B at 90% of it.
func checkFixtureRun(t *testing.T, dir string, a, a2, b *result.Run) {
	t.Helper()
	for _, r := range []*result.Run{a, a2, b} {
		if len(r.Points) != 1 || r.Points[0].DurationS != 60 || r.Points[0].Failed {
			t.Fatalf("%s: %d points (want one 60 s point that did not fail)", dir, len(r.Points))
		}
		if m := r.Environment.Machine; m == nil || !m.Exclusive || len(m.OtherLabs) > 0 {
			t.Fatalf("%s: run %s did not hold the machine alone (%+v): the fixture wants a quiet machine", dir, r.RunID, m)
		}
	}
	pa, pa2, pb := a.Points[0], a2.Points[0], b.Points[0]
	if pa.LinkRateBps != pa2.LinkRateBps || pb.LinkRateBps*10 != pa.LinkRateBps*9 || pa.Threads != pb.Threads ||
		pa.Threads != pa2.Threads || pa.Workload != pb.Workload {
		t.Fatalf("%s: rates %d %d %d, threads %d %d %d: want A and A' at one rate, B at 90%% of it, one thread count",
			dir, pa.LinkRateBps, pa2.LinkRateBps, pb.LinkRateBps, pa.Threads, pa2.Threads, pb.Threads)
	}
}

// nothingCalled is whether every cell of every table reads "~" (or has no figure).
func nothingCalled(c *Comparison) bool {
	for _, tb := range c.Tables {
		for _, r := range tb.Rows {
			for _, ch := range r.Changes {
				if ch.Significant {
					return false
				}
			}
		}
	}
	return true
}

func tpsChange(t *testing.T, c *Comparison) Change {
	t.Helper()
	return tableOf(t, c, "tps").Rows[0].Changes[0]
}

func textOf(t *testing.T, c *Comparison) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, c, Text); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
