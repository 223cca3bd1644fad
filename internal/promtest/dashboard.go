package promtest

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

// Query is one query of a Grafana dashboard and the panel it draws.
type Query struct{ Panel, Expr string }

// DashboardQueries are the queries of the Grafana dashboard JSON at path, panel by panel.
func DashboardQueries(t testing.TB, path string) []Query {
	t.Helper()
	data, err := os.ReadFile(path)
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
		t.Fatalf("%s: %v", path, err)
	}
	var out []Query
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, Query{p.Title, tg.Expr})
		}
	}
	return out
}

// MetricsIn are the metric names of prefix (wirelab_tunnel_, process_, ...) that expr names.
func MetricsIn(expr string, prefixes ...string) []string {
	re := regexp.MustCompile(`\b(` + strings.Join(prefixes, "|") + `)[a-z0-9_]+`)
	return re.FindAllString(expr, -1)
}

// PageQueries are the queries in the ```promql blocks of the markdown page at path, each
// block's queries split by their comment lines.
func PageQueries(t testing.TB, path string) []string {
	t.Helper()
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, block := range regexp.MustCompile("(?s)```promql\n(.*?)```").FindAllSubmatch(page, -1) {
		for _, q := range regexp.MustCompile(`(?m)^#.*\n`).Split(string(block[1]), -1) {
			if q = oneLine(q); q != "" {
				out = append(out, q)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no PromQL in %s", path)
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// OnDashboard reports whether q is one of qs's expressions, whitespace aside.
func OnDashboard(qs []Query, q string) bool {
	return slices.ContainsFunc(qs, func(d Query) bool { return oneLine(d.Expr) == oneLine(q) })
}

// CheckRules runs `promtool check rules` on qs as recording rules: each must parse as
// PromQL.
func CheckRules(t testing.TB, qs []Query) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		nstest.Unavailable(t, "promtool not installed (Debian package prometheus)")
		return
	}
	rules := "groups:\n- name: dashboard\n  rules:\n"
	for i, q := range qs {
		e, _ := json.Marshal(q.Expr)
		rules += "  - record: dashboard:q" + string(rune('a'+i)) + "\n    expr: " + string(e) + "\n"
	}
	path := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(path, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "check", "rules", path).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
}

// CheckDashboard holds a Grafana dashboard to the endpoint it draws and to the page that
// documents it: it has at least min queries, each names only metrics in served (of those
// starting with one of prefixes), every query of the page's PromQL is on it, and promtool
// parses them all.
func CheckDashboard(t testing.TB, dashboard, page string, min int, served []string, prefixes ...string) {
	t.Helper()
	qs := DashboardQueries(t, dashboard)
	if len(qs) < min {
		t.Fatalf("%s: %d queries, want at least %d", dashboard, len(qs), min)
	}
	for _, q := range qs {
		for _, name := range MetricsIn(q.Expr, prefixes...) {
			if !slices.Contains(served, name) {
				t.Errorf("panel %q: %s is not a metric the endpoint serves", q.Panel, name)
			}
		}
	}
	for _, q := range PageQueries(t, page) {
		if !OnDashboard(qs, q) {
			t.Errorf("%s's query is not on the dashboard: %s", page, q)
		}
	}
	CheckRules(t, qs)
}
