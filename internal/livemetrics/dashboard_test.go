package livemetrics

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/wirelab/wirelab/internal/promtest"
)

var docsDir = filepath.Join("..", "..", "docs")

// The dashboard's queries name only metrics a Registry serves and parse as PromQL; the
// page's PromQL is the dashboard's.
func TestDashboardQueries(t *testing.T) {
	qs := promtest.DashboardQueries(t, filepath.Join(docsDir, "run-dashboard.json"))
	if len(qs) < 6 {
		t.Fatalf("%d queries in the dashboard", len(qs))
	}
	names := append(metricNames(), "process_cpu_seconds_total")
	for _, q := range qs {
		for _, name := range promtest.MetricsIn(q.Expr, prefix, "process_") {
			if !slices.Contains(names, name) {
				t.Errorf("panel %q: %s is not a metric of a run", q.Panel, name)
			}
		}
	}
	for _, q := range promtest.PageQueries(t, filepath.Join(docsDir, "live-metrics.md")) {
		if !promtest.OnDashboard(qs, q) {
			t.Errorf("the page's query is not on the dashboard: %s", q)
		}
	}
	promtest.CheckRules(t, qs)
}
