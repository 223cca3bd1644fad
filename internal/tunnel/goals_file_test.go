package tunnel

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// judgeFlags parses args as `wirelab tunnel goals` would.
func judgeFlags(t *testing.T, args ...string) *JudgeFlags {
	t.Helper()
	fs := flag.NewFlagSet("tunnel goals", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := AddJudgeFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

// The bench's path: judge rows into a goals file, merge a study's goals file into it, and
// a later run that measured one goal leaves the others' verdicts as they were.
func TestJudgeFlagsMergeRuns(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "goals.json")
	study := filepath.Join(dir, "study-goals.json")
	load, _ := GoalByKey("replication-load")
	sj := load.Judge([]Case{{Name: "2 Mbit/s, RTT 250 ms", Figure: 2.95, Lo: 2.25, Hi: 3.84, Bounded: true, N: 10, Basis: "fitted limits"}})
	sj.Command, sj.Date = "wirelab study replication --quick", "2026-11-22 02:28 to 02:39 UTC"
	if err := WriteGoals(study, GoalsFile{Goals: []Judgement{sj}}); err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	f := judgeFlags(t, "--judge", "testdata/goal-rows.tsv", "--with", study, "--out", out, "--command", "PARTS=3 scripts/bench-tunnel.sh", "--date", "2026-12-01 22:47 to 23:51 UTC")
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := f.Run(&w); err != nil {
		t.Fatal(err)
	}
	gf, err := ReadGoals(out)
	if err != nil {
		t.Fatal(err)
	}
	if keys := goalKeys(gf); keys != "over-socat over-compression replication-load" {
		t.Fatalf("goals %s", keys)
	}
	if gf.Goals[0].Command != "PARTS=3 scripts/bench-tunnel.sh" || gf.Goals[2].Command != sj.Command || gf.Goals[2].Verdict != Missed {
		t.Errorf("%+v", gf.Goals)
	}
	for _, want := range []string{
		"| over-socat | ≥ 1.0× | **not shown** | `PARTS=3 scripts/bench-tunnel.sh` | 2026-12-01 22:47 to 23:51 UTC |",
		"| replication-load | ≥ 4.0× | **missed** | `wirelab study replication --quick` | 2026-11-22 02:28 to 02:39 UTC |",
		"| replication-wire | ≤ 0.30× | not judged yet | `wirelab study replication --quick` | - |",
		"| over-socat | 32 threads | 1.29× | 1.19–1.40× | 8 | 8 paired rounds: geometric mean of the per-round ratios, t interval of their logs | met |",
		"| over-socat | 2 threads | 1.03× | 0.97–1.10× | 8 | 8 paired rounds: geometric mean of the per-round ratios, t interval of their logs | not shown (the interval straddles ≥ 1.0×) |",
		"| replication-load | 2 Mbit/s, RTT 250 ms | 2.95× | 2.25–3.84× | 10 | fitted limits | missed |",
	} {
		if !strings.Contains(w.String(), want+"\n") {
			t.Errorf("tables lack %q:\n%s", want, w.String())
		}
	}

	// A later run judged over-socat alone: the other goals keep their verdicts and dates.
	rows := filepath.Join(dir, "rows.tsv")
	tsv := RowsHeader + "\n"
	for r := 1; r <= 3; r++ {
		tsv += "over-socat\t2 threads\tbase\tsocat\t" + string(rune('0'+r)) + "\t100\t-\n"
		tsv += "over-socat\t2 threads\ttunnel\ttunnel mux on\t" + string(rune('0'+r)) + "\t" + []string{"", "80", "82", "79"}[r] + "\t-\n"
	}
	if err := os.WriteFile(rows, []byte(tsv), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := judgeFlags(t, "--judge", rows, "--out", out, "--command", "PARTS=6 scripts/bench-tunnel.sh", "--date", "2026-12-02 10:00 to 10:20 UTC").Run(io.Discard); err != nil {
		t.Fatal(err)
	}
	again, err := ReadGoals(out)
	if err != nil {
		t.Fatal(err)
	}
	if goalKeys(again) != goalKeys(gf) || again.Goals[0].Verdict != Missed || len(again.Goals[0].Cases) != 1 ||
		again.Goals[0].Date != "2026-12-02 10:00 to 10:20 UTC" || again.Goals[1].Date != gf.Goals[1].Date {
		t.Errorf("after a second run: %+v", again.Goals)
	}
	if err := again.Check(); err != nil {
		t.Error(err)
	}

	// --table and --summary print the file as it is.
	w.Reset()
	if err := judgeFlags(t, "--summary", out).Run(&w); err != nil || w.String() != again.Summary() {
		t.Errorf("--summary: %v\n%s", err, w.String())
	}
}

func goalKeys(f GoalsFile) string {
	var k []string
	for _, j := range f.Goals {
		k = append(k, j.Goal)
	}
	return strings.Join(k, " ")
}

// A verdict the intervals do not give, or a target changed since it was judged, is caught.
func TestGoalsFileCheck(t *testing.T) {
	socat, _ := GoalByKey("over-socat")
	j := socat.Judge([]Case{{Name: "2 threads", Figure: 1.03, Lo: 0.97, Hi: 1.10, Bounded: true, N: 8}})
	if err := (GoalsFile{Goals: []Judgement{j}}).Check(); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*Judgement){
		"goal met by hand": func(j *Judgement) { j.Verdict = Met },
		"case met by hand": func(j *Judgement) { j.Cases[0].Verdict = Met },
		"an old target":    func(j *Judgement) { j.Target = "≥ 0.9×" },
	} {
		bad := j
		bad.Cases = append([]Case(nil), j.Cases...)
		edit(&bad)
		if err := (GoalsFile{Goals: []Judgement{bad}}).Check(); err == nil {
			t.Errorf("%s: passed", name)
		}
	}
}

func TestJudgeFlagsValidate(t *testing.T) {
	for name, args := range map[string][]string{
		"out alone":            {"--out", "g.json"},
		"judge without out":    {"--judge", "r.tsv", "--command", "c", "--date", "d"},
		"judge without date":   {"--judge", "r.tsv", "--out", "g.json", "--command", "c"},
		"command without rows": {"--with", "s.json", "--out", "g.json", "--command", "c"},
		"table and summary":    {"--table", "g.json", "--summary", "g.json"},
		"table and judge":      {"--table", "g.json", "--judge", "r.tsv"},
	} {
		if err := judgeFlags(t, args...).Validate(); err == nil {
			t.Errorf("%s: valid", name)
		}
	}
	if judgeFlags(t).Given() {
		t.Error("no flag given, Given says one was")
	}
}
