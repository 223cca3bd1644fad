package sysbench

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/stats"
)

// A real run with --histogram=on and --report-checkpoints=1: the checkpoint's report
// first, the histogram and the final report (the seconds after the checkpoint) last.
func TestHistogramAfterACheckpoint(t *testing.T) {
	b, err := os.ReadFile("testdata/ro_histogram_reset.txt")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSummary(string(b))
	if err != nil {
		t.Fatal(err)
	}
	// Counts add up over both reports; rates and latencies are the last report's.
	if s.Transactions != 2409+5327 || s.Events != 2409+5327 || s.Read != 33769+74535 ||
		s.TPS != 2657.95 || s.LatPct != 1.86 || s.LatMax != 5.39 || s.Percentile != 95 {
		t.Errorf("summary %+v", s)
	}
	h := s.Histogram
	if h == nil {
		t.Fatal("no histogram")
	}
	if h.Count() != 5327 {
		t.Errorf("histogram holds %d transactions, want the final report's 5327", h.Count())
	}
	if p95 := h.Percentile(95); math.Abs(p95-s.LatPct) > 0.005 {
		t.Errorf("histogram p95 %.3f, sysbench's %.2f", p95, s.LatPct)
	}
	if top := h.Buckets[len(h.Buckets)-1].Ms; math.Abs(top-s.LatMax)/s.LatMax > 0.01 {
		t.Errorf("top bucket %.3f, max %.2f: want within a bucket", top, s.LatMax)
	}
	// The grid stats.BucketOf computes is sysbench's: every printed value maps to itself.
	for _, bk := range h.Buckets {
		if got := stats.BucketOf(bk.Ms); got != bk.Ms {
			t.Errorf("BucketOf(%.3f) = %.3f", bk.Ms, got)
		}
	}
}

func TestNoHistogram(t *testing.T) {
	b, err := os.ReadFile("testdata/ro_plain.txt")
	if err != nil {
		t.Fatal(err)
	}
	if s, err := ParseSummary(string(b)); err != nil || s.Histogram != nil || s.Transactions != 3265 {
		t.Errorf("ro_plain: histogram %v, transactions %d, %v", s.Histogram, s.Transactions, err)
	}
	cut := strings.Split(histogramTitle+"\n       value  ------------- distribution ------------- count\n", "\n")
	if _, ok := ParseHistogram(strings.Join(cut, "\n")); ok {
		t.Error("a title without buckets parsed as a histogram")
	}
}
