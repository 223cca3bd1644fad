package result

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/stats"
)

func TestLatencyRoundTrip(t *testing.T) {
	h := stats.NewHistogram([]stats.Bucket{{Ms: 1.007, Count: 50}, {Ms: 1.998, Count: 45}, {Ms: 9.855, Count: 5}})
	p := Point{Study: "run", Series: "20mbit", Threads: 4, TPS: 100, LatP95Ms: 3.3}
	p.SetLatency(h, 10.2)
	if p.LatP50Ms != 1.007 || p.LatP95Ms != 1.998 || p.LatP99Ms != 9.855 || p.LatMaxMs != 10.2 {
		t.Fatalf("SetLatency: p50 %g p95 %g p99 %g max %g", p.LatP50Ms, p.LatP95Ms, p.LatP99Ms, p.LatMaxMs)
	}
	dir := t.TempDir()
	if err := Write(dir, &Run{Study: "run", Points: []Point{p}}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "results.json"))
	for _, key := range []string{`"lat_p50_ms": 1.007`, `"lat_p99_ms": 9.855`, `"lat_max_ms": 10.2`, `"lat_histogram"`, `"ms": 1.998`} {
		if !strings.Contains(string(raw), key) {
			t.Errorf("results.json lacks %s", key)
		}
	}
	out, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if q := out.Points[0]; q.LatHistogram == nil || q.LatHistogram.Count() != 100 || q.LatP99Ms != 9.855 {
		t.Errorf("read back %+v", q)
	}
	rows := readCSV(t, dir)
	if csvField(t, rows, "lat_p50_ms") != "1.007" || csvField(t, rows, "lat_p99_ms") != "9.855" || csvField(t, rows, "lat_max_ms") != "10.2" {
		t.Errorf("csv %v", rows)
	}
	// A point without a histogram (older files, nothing completed) keeps its fields and
	// writes none of the new ones.
	var q Point
	q.SetLatency(stats.Histogram{}, 0)
	b, _ := json.Marshal(q)
	if strings.Contains(string(b), "lat_p50") || strings.Contains(string(b), "lat_histogram") {
		t.Errorf("empty latency written: %s", b)
	}
}

func TestMergedLatency(t *testing.T) {
	a := stats.NewHistogram([]stats.Bucket{{Ms: 1, Count: 99}, {Ms: 50, Count: 1}})
	b := stats.NewHistogram([]stats.Bucket{{Ms: 2, Count: 100}})
	pa, pb := Point{LatHistogram: &a, LatMaxMs: 51}, Point{LatHistogram: &b, LatMaxMs: 2.01}
	l, ok := MergedLatency([]Point{pa, pb})
	// 200 latencies, 99 of 1 ms and 100 of 2 ms: p50 (rank 100) and p99 (rank 198) are
	// 2 ms; the slowest is the larger of the two exact maxima.
	if !ok || l.Count != 200 || l.P50Ms != 2 || l.P99Ms != 2 || l.MaxMs != 51 {
		t.Errorf("merged %+v, %v", l, ok)
	}
	if _, ok := MergedLatency([]Point{pa, {}}); ok {
		t.Error("a point without a histogram merged")
	}
}
