package tunnel

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/nstest"
)

// docsDir is the repository's docs/, from this package's directory.
var docsDir = filepath.Join("..", "..", "docs")

// The unit in docs/ passes `systemd-analyze verify` for both ends. verify wants the
// ExecStart binary to exist: the copy checked runs this test's binary in its place.
func TestServiceUnitVerifies(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		nstest.Unavailable(t, "systemd-analyze not installed")
		return
	}
	unit, err := os.ReadFile(filepath.Join(docsDir, "wirelab-tunnel@.service"))
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(unit), "ExecStart=/usr/local/bin/wirelab ", "ExecStart="+self+" ", 1)
	if text == string(unit) {
		t.Fatal("the unit's ExecStart is not /usr/local/bin/wirelab")
	}
	for _, role := range []Role{Entry, Exit} {
		path := filepath.Join(t.TempDir(), "wirelab-tunnel@"+string(role)+".service")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("systemd-analyze", "verify", path).CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("systemd-analyze verify %s: %v\n%s", role, err, out)
		}
	}
}

// The page's config files are accepted by the ends they are for.
func TestServiceDocConfigs(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(docsDir, "tunnel-service.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := regexp.MustCompile(`(?s)tunnel-(entry|exit)\.yaml <<'EOF'\n(.*?)\nEOF\n`).FindAllStringSubmatch(string(page), -1)
	if len(files) != 2 {
		t.Fatalf("found %d config files in the page, want the exit's and the entry's", len(files))
	}
	for _, f := range files {
		path := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(path, []byte(f[2]), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := parseEnd(t, Role(f[1]), "--config", path); err != nil {
			t.Errorf("the page's %s config: %v", f[1], err)
		}
	}
}

// The dashboard's queries name only metrics an end serves, and parse as PromQL.
func TestDashboardQueries(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(docsDir, "tunnel-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	var exprs []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
			for _, name := range regexp.MustCompile(`(wirelab_tunnel|process)_[a-z_]+`).FindAllString(tg.Expr, -1) {
				if !slices.Contains(MetricNames(), name) {
					t.Errorf("panel %q: %s is not a metric of the tunnel", p.Title, name)
				}
			}
		}
	}
	if len(exprs) < 3 {
		t.Fatalf("%d queries in the dashboard", len(exprs))
	}
	// The page's PromQL is the dashboard's.
	page, err := os.ReadFile(filepath.Join(docsDir, "tunnel-service.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```promql\n(.*?)```").FindSubmatch(page)
	if block == nil {
		t.Fatal("no PromQL in docs/tunnel-service.md")
	}
	oneLine := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for _, q := range regexp.MustCompile(`(?m)^#.*\n`).Split(string(block[1]), -1) {
		if q = oneLine(q); q != "" && !slices.ContainsFunc(exprs, func(e string) bool { return oneLine(e) == q }) {
			t.Errorf("the page's query is not on the dashboard: %s", q)
		}
	}
	bin, err := exec.LookPath("promtool")
	if err != nil {
		nstest.Unavailable(t, "promtool not installed (Debian package prometheus)")
		return
	}
	rules := "groups:\n- name: dashboard\n  rules:\n"
	for i, e := range exprs {
		q, _ := json.Marshal(e)
		rules += "  - record: dashboard:q" + string(rune('a'+i)) + "\n    expr: " + string(q) + "\n"
	}
	path := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(path, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "check", "rules", path).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
}
