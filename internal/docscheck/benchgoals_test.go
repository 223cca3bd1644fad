package docscheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/replication"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/tunnel"
)

// copyInto copies the repository's files into dir at the same paths.
func copyInto(t *testing.T, dir string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// scripts/bench-tunnel.sh's goals step on a copy of the repository: with no part measured
// and REPLICATION_GOALS naming a study's goals.json (the real quick run's, judged by
// today's code), it merges those verdicts into docs/bench/tunnel-goals.json, keeps the
// goals the run did not measure, ends the bench page with the file's tables and rewrites
// the quotes in docs/tunnel.md and README.md, leaving the page's other sections as they
// were.
func TestBenchTunnelGoalsStep(t *testing.T) {
	tree := t.TempDir()
	copyInto(t, tree, "scripts/bench-tunnel.sh", "scripts/benchpage.sh", "docs/bench/tunnel.md", "docs/bench/tunnel-goals.json",
		"docs/tunnel.md", "README.md")
	if out, err := exec.Command("go", "build", "-o", filepath.Join(tree, "bin/wirelab"), "../../cmd/wirelab").CombinedOutput(); err != nil {
		t.Fatalf("build wirelab: %v\n%s", err, out)
	}
	run, err := result.ReadFile(filepath.Join(root, "internal/replication/testdata/quick-results.json"))
	if err != nil {
		t.Fatal(err)
	}
	study := t.TempDir()
	if err := replication.WriteGoals(study, "wirelab study replication --quick", run); err != nil {
		t.Fatal(err)
	}
	fake := fakeMachine(t)
	cmd := exec.Command("bash", filepath.Join(tree, "scripts/bench-tunnel.sh"))
	cmd.Env = append(os.Environ(), "PARTS=none", "REPLICATION_GOALS="+filepath.Join(study, replication.GoalsFile),
		"BENCH_PROC="+filepath.Join(fake, "proc"), "BENCH_SYS="+filepath.Join(fake, "sys"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bench-tunnel.sh: %v\n%s", err, out)
	}

	gf, err := tunnel.ReadGoals(filepath.Join(tree, "docs/bench/tunnel-goals.json"))
	if err != nil {
		t.Fatal(err)
	}
	before, err := tunnel.ReadGoals(filepath.Join(root, "docs/bench/tunnel-goals.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(gf.Goals) != len(before.Goals)+3 || gf.Goals[len(gf.Goals)-1].Goal != "replication-p99-lag" ||
		gf.Goals[len(gf.Goals)-1].Command != "wirelab study replication --quick" || gf.Goals[0].Date != before.Goals[0].Date {
		t.Errorf("goals after the step: %+v", gf.Goals)
	}
	if err := gf.Check(); err != nil {
		t.Error(err)
	}

	page, err := ParseBenchPage(read(t, filepath.Join(tree, "docs/bench/tunnel.md")))
	if err != nil {
		t.Fatal(err)
	}
	old, err := ParseBenchPage(read(t, filepath.Join(root, "docs/bench/tunnel.md")))
	if err != nil {
		t.Fatal(err)
	}
	last := page.Sections[len(page.Sections)-1]
	if last.ID != "goals" || !strings.Contains(last.Command, "REPLICATION_GOALS=") || last.Body != strings.TrimSpace(gf.Tables()) {
		t.Errorf("the page's last section %+v\nwant the goals file's tables:\n%s", last, gf.Tables())
	}
	for i, s := range old.Sections {
		if s.ID != "goals" && page.Sections[i] != s {
			t.Errorf("section %s changed:\n%+v", s.ID, page.Sections[i])
		}
	}
	for path, want := range map[string]string{"docs/tunnel.md": gf.Tables(), "README.md": gf.Summary()} {
		doc := read(t, filepath.Join(tree, path))
		if !strings.Contains(doc, "-->\n\n"+want+"\n<!-- end bench quote goals -->") {
			t.Errorf("%s does not quote the goals file:\n%s", path, doc)
		}
	}
}
