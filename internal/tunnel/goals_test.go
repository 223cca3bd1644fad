package tunnel

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoFile reads a file of the repository.
func repoFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// quoted is the block a document holds between the markers bench_quote writes.
func quoted(t *testing.T, doc, path, id string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)\n<!-- bench quote ` + id + `: [^\n]* -->\n(.*?)\n<!-- end bench quote ` + id + ` -->\n`).FindStringSubmatch(doc)
	if m == nil {
		t.Fatalf("%s has no block <!-- bench quote %s: ... --> ... <!-- end bench quote %s -->", path, id, id)
	}
	return m[1]
}

// The documents quote the goals and their verdicts as code wrote them: docs/tunnel.md
// every goal's row as `wirelab tunnel goals` prints it; docs/bench/tunnel-goals.json holds
// verdicts that today's goals give its intervals (a hand-edited "met", or a target changed
// since, fails); docs/tunnel.md, README.md and the bench page's goals section (once a run
// wrote it) hold that file's tables exactly; and no line outside those blocks pairs a goal
// with a verdict of its own.
func TestDocsQuoteEveryGoal(t *testing.T) {
	tunnelDoc := repoFile(t, "docs/tunnel.md")
	for _, g := range Goals() {
		if !strings.Contains(tunnelDoc, g.Row()) {
			t.Errorf("docs/tunnel.md does not quote goal %s as `wirelab tunnel goals` prints it:\n%s", g.Key, g.Row())
		}
	}
	gf, err := ReadGoals(filepath.Join("..", "..", "docs/bench/tunnel-goals.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := gf.Check(); err != nil {
		t.Errorf("docs/bench/tunnel-goals.json: %v", err)
	}
	for _, q := range []struct{ path, want string }{
		{"docs/tunnel.md", gf.Tables()},
		{"README.md", gf.Summary()},
	} {
		doc := repoFile(t, q.path)
		if got := quoted(t, doc, q.path, "goals"); strings.TrimSpace(got) != strings.TrimSpace(q.want) {
			t.Errorf("%s quotes goals that docs/bench/tunnel-goals.json does not hold:\n%s\nwant (`wirelab tunnel goals --table|--summary docs/bench/tunnel-goals.json`):\n%s", q.path, got, q.want)
		}
	}
	page := repoFile(t, "docs/bench/tunnel.md")
	if _, section, ok := strings.Cut(page, "<!-- bench section goals -->\n"); ok {
		section, _, _ = strings.Cut(section, "<!-- end bench section goals -->")
		if !strings.Contains(section, "\n\n"+strings.TrimSpace(gf.Tables())+"\n") {
			t.Errorf("docs/bench/tunnel.md's goals section is not docs/bench/tunnel-goals.json's tables:\n%s", section)
		}
	}
	verdict := regexp.MustCompile(`(?i)\b(met|missed|not shown)\b`)
	for _, path := range []string{"README.md", "docs/tunnel.md", "docs/study-replication.md", "docs/bench/tunnel.md"} {
		doc := regexp.MustCompile(`(?s)<!-- bench (quote|section) goals.*?<!-- end bench (quote|section) goals -->`).ReplaceAllString(repoFile(t, path), "")
		for _, line := range strings.Split(doc, "\n") {
			for _, g := range Goals() {
				if verdict.MatchString(line) && (strings.Contains(line, g.Key) || strings.Contains(line, g.Bound())) {
					t.Errorf("%s: %q gives goal %s a verdict by hand: quote the goals file's tables instead", path, line, g.Key)
				}
			}
		}
	}
}

func TestBound(t *testing.T) {
	for _, c := range []struct {
		g    Goal
		want string
	}{
		{Goal{AtLeast: true, Value: 1, Unit: "×"}, "≥ 1.0×"},
		{Goal{AtLeast: true, Value: 2.5, Unit: "×"}, "≥ 2.5×"},
		{Goal{Value: 0.3, Unit: "×"}, "≤ 0.30×"},
		{Goal{Value: 1, Unit: " s"}, "≤ 1.0 s"},
	} {
		if got := c.g.Bound(); got != c.want {
			t.Errorf("Bound(%+v) = %q, want %q", c.g, got, c.want)
		}
	}
}

// A case is judged on its whole interval, against the goal's direction, and a goal on all
// its cases: met only when every case is, missed when one is.
func TestGoalJudge(t *testing.T) {
	socat, _ := GoalByKey("over-socat")
	wire, _ := GoalByKey("replication-wire")
	c := func(lo, hi float64) Case {
		return Case{Name: "c", Figure: (lo + hi) / 2, Lo: lo, Hi: hi, Bounded: true, N: 8}
	}
	for _, tc := range []struct {
		g     Goal
		cases []Case
		want  Verdict
	}{
		{socat, []Case{c(1.0, 1.2)}, Met}, // a bound on the goal counts, as stats.AtLeast has it
		{socat, []Case{c(0.97, 1.10)}, NotShown},
		{socat, []Case{c(0.8, 0.99)}, Missed},
		{socat, []Case{{Name: "c", Figure: 1.5, N: 2}}, NotShown}, // no interval
		{socat, []Case{c(1.05, 1.2), c(1.19, 1.40)}, Met},
		{socat, []Case{c(0.97, 1.10), c(1.19, 1.40)}, NotShown},
		{socat, []Case{c(0.8, 0.9), c(1.19, 1.40)}, Missed},
		{socat, nil, NotShown},
		{wire, []Case{c(0.25, 0.29)}, Met},
		{wire, []Case{c(0.25, 0.35)}, NotShown},
		{wire, []Case{c(0.31, 0.35)}, Missed},
	} {
		j := tc.g.Judge(tc.cases)
		if j.Verdict != tc.want || j.Target != tc.g.Bound() || j.Goal != tc.g.Key {
			t.Errorf("%s %+v: %+v, want %s", tc.g.Key, tc.cases, j, tc.want)
		}
	}
}
