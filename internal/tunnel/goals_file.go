package tunnel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// GoalsSchema is the version of the goals file's layout.
const GoalsSchema = 1

// GoalsFile is the machine-readable record of the goals' verdicts: each goal's latest
// judgement, in the order Goals lists them. `make bench-tunnel` keeps one in
// docs/bench/tunnel-goals.json, the replication study writes one beside its results.json,
// and the documents quote its tables.
type GoalsFile struct {
	Schema int         `json:"schema"`
	Goals  []Judgement `json:"goals"`
}

// ReadGoals reads a goals file. A file that names a goal Goals does not hold, or one goal
// twice, is refused.
func ReadGoals(path string) (GoalsFile, error) {
	var f GoalsFile
	b, err := os.ReadFile(path)
	if err != nil {
		return f, fmt.Errorf("read goals: %w", err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("read goals %s: %w", path, err)
	}
	if f.Schema != GoalsSchema {
		return f, fmt.Errorf("read goals %s: schema %d, want %d", path, f.Schema, GoalsSchema)
	}
	seen := map[string]bool{}
	for _, j := range f.Goals {
		if _, ok := GoalByKey(j.Goal); !ok || seen[j.Goal] {
			return f, fmt.Errorf("read goals %s: goal %q is unknown or given twice", path, j.Goal)
		}
		seen[j.Goal] = true
	}
	return f, nil
}

// readGoalsOrNone is the goals file at path, or an empty one where there is none yet.
func readGoalsOrNone(path string) (GoalsFile, error) {
	f, err := ReadGoals(path)
	if errors.Is(err, fs.ErrNotExist) {
		return GoalsFile{Schema: GoalsSchema}, nil
	}
	return f, err
}

// WriteGoals writes f to path (indented JSON), through a temporary file so a reader never
// sees half of it.
func WriteGoals(path string, f GoalsFile) error {
	f.Schema = GoalsSchema
	for _, j := range f.Goals {
		for _, c := range j.Cases {
			if !finite(c.Figure, c.Lo, c.Hi) {
				return fmt.Errorf("write goals %s: goal %s, case %q: a figure is not finite", path, j.Goal, c.Name)
			}
		}
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("write goals %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write goals: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write goals: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write goals: %w", err)
	}
	return nil
}

func finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// Merge is f with each of js replacing the judgement of its goal (or added), in Goals'
// order: a run that measured some goals leaves the others' last judgements as they were.
func (f GoalsFile) Merge(js ...Judgement) GoalsFile {
	by := map[string]Judgement{}
	for _, j := range f.Goals {
		by[j.Goal] = j
	}
	for _, j := range js {
		by[j.Goal] = j
	}
	out := GoalsFile{Schema: GoalsSchema}
	for _, g := range Goals() {
		if j, ok := by[g.Key]; ok {
			out.Goals = append(out.Goals, j)
		}
	}
	return out
}

// Check judges every case of f again from its interval against today's goals: a verdict
// or a target that differs (a hand edit, or a goal changed since it was judged) is an
// error naming the goal.
func (f GoalsFile) Check() error {
	var errs []error
	for _, j := range f.Goals {
		g, ok := GoalByKey(j.Goal)
		if !ok {
			errs = append(errs, fmt.Errorf("goal %q: not one of `wirelab tunnel goals`", j.Goal))
			continue
		}
		again := g.Judge(j.Cases)
		again.Command, again.Date = j.Command, j.Date
		a, _ := json.Marshal(again)
		b, _ := json.Marshal(j)
		if !bytes.Equal(a, b) {
			errs = append(errs, fmt.Errorf("goal %s: the file says %s (target %s), its intervals judged against %s say %s", j.Goal, j.Verdict, j.Target, again.Target, again.Verdict))
		}
	}
	return errors.Join(errs...)
}

// The tables the documents quote: Summary in README.md, Tables in docs/tunnel.md and on
// the bench page.

// Summary is one row per goal: its target, its verdict, and the command that measured it
// and when; a goal no run has judged yet says so.
func (f GoalsFile) Summary() string {
	by := map[string]Judgement{}
	for _, j := range f.Goals {
		by[j.Goal] = j
	}
	var b strings.Builder
	b.WriteString("| goal | target | verdict | measured by | date |\n|---|---|---|---|---|\n")
	for _, g := range Goals() {
		j, ok := by[g.Key]
		if !ok {
			fmt.Fprintf(&b, "| %s | %s | not judged yet | `%s` | - |\n", g.Key, g.Bound(), g.Where)
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | **%s** | `%s` | %s |\n", j.Goal, j.Target, j.Verdict, cell(j.Command), cell(j.Date))
	}
	return b.String()
}

// Cases is one row per case of every goal judged: the figure, its 95% interval, what the
// interval rests on and the case's verdict.
func (f GoalsFile) Cases() string {
	var b strings.Builder
	b.WriteString("| goal | case | figure | 95% interval | n | interval from | verdict |\n|---|---|---:|---|---:|---|---|\n")
	for _, j := range f.Goals {
		g, _ := GoalByKey(j.Goal)
		for _, c := range j.Cases {
			fig := "-"
			if c.N > 0 || c.Bounded {
				fig = g.figureText(c.Figure)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", j.Goal, cell(c.Name), fig, g.rangeText(c),
				strconv.Itoa(c.N), cell(c.Basis), c.verdictText(g))
		}
	}
	return b.String()
}

// Tables is the rule, Summary and Cases, as the bench page and docs/tunnel.md print them.
func (f GoalsFile) Tables() string {
	return "A case is met when its whole 95% interval clears the target, missed when the whole interval " +
		"falls short, and not shown otherwise; a goal is met when every case is met, missed when one is.\n\n" +
		f.Summary() + "\n" + f.Cases()
}

// cell is s as one markdown table cell: pipes escaped, "-" for nothing.
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}
