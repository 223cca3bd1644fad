package sysbench

import (
	"fmt"
	"slices"
	"strings"
)

// Workloads are the OLTP scripts sysbench 1.0 bundles that wirelab runs, in name order.
var Workloads = []string{"oltp_delete", "oltp_insert", "oltp_point_select", "oltp_read_only", "oltp_read_write",
	"oltp_update_index", "oltp_update_non_index", "oltp_write_only", "select_random_points", "select_random_ranges"}

// DefaultWorkload is the workload of a run and the closed-loop studies when none is given.
const DefaultWorkload = "oltp_read_only"

// RandTypes are sysbench's --rand-type distributions: how its workloads pick keys.
var RandTypes = []string{"uniform", "gaussian", "special", "pareto"}

// Limits of a data set (--tables × --table-size): beyond them the value is a typo.
const (
	MaxTables    = 1000
	MaxTableSize = 100_000_000
)

// IsWorkload says whether w is one of Workloads.
func IsWorkload(w string) bool { return slices.Contains(Workloads, w) }

// CheckRandType refuses a --rand-type sysbench does not have, naming the accepted ones.
func CheckRandType(s string) error {
	if !slices.Contains(RandTypes, s) {
		return fmt.Errorf("--rand-type %q: want one of %s", s, strings.Join(RandTypes, ", "))
	}
	return nil
}

// CheckDataSet refuses --tables and --table-size out of 1..MaxTables, 1..MaxTableSize.
func CheckDataSet(tables, tableSize int) error {
	if tables < 1 || tables > MaxTables {
		return fmt.Errorf("--tables %d: want 1..%d", tables, MaxTables)
	}
	if tableSize < 1 || tableSize > MaxTableSize {
		return fmt.Errorf("--table-size %d: want 1..%d", tableSize, MaxTableSize)
	}
	return nil
}
