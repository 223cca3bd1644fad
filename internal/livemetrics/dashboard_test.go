package livemetrics

import (
	"path/filepath"
	"testing"

	"github.com/wirelab/wirelab/internal/promtest"
)

// The dashboard's queries name only metrics a Registry serves and parse as PromQL; the
// page's PromQL is the dashboard's.
func TestDashboardQueries(t *testing.T) {
	docs := filepath.Join("..", "..", "docs")
	promtest.CheckDashboard(t, filepath.Join(docs, "run-dashboard.json"), filepath.Join(docs, "live-metrics.md"),
		6, append(metricNames(), "process_cpu_seconds_total"), prefix, "process_")
}
