package sysbench

import (
	"slices"
	"strings"
	"testing"
)

func TestWorkloadsAndRanges(t *testing.T) {
	if !slices.IsSorted(Workloads) || !IsWorkload(DefaultWorkload) || IsWorkload("tpcb-like") {
		t.Errorf("Workloads %v: want sorted, with %s, without pgbench's scripts", Workloads, DefaultWorkload)
	}
	if err := CheckRandType("pareto"); err != nil {
		t.Error(err)
	}
	if err := CheckRandType("zipf"); err == nil || !strings.Contains(err.Error(), `--rand-type "zipf": want one of uniform, gaussian, special, pareto`) {
		t.Errorf("zipf: %v", err)
	}
	for _, c := range []struct {
		tables, size int
		want         string
	}{
		{4, 100000, ""}, {1000, 100_000_000, ""}, {0, 10, "--tables 0: want 1..1000"},
		{1001, 10, "--tables 1001"}, {4, 0, "--table-size 0: want 1..100000000"}, {4, 100_000_001, "--table-size 100000001"},
	} {
		err := CheckDataSet(c.tables, c.size)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckDataSet(%d, %d): %v, want %q", c.tables, c.size, err, c.want)
		}
	}
}
