package replication

import (
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/sysbench"
)

func TestCompareChecksums(t *testing.T) {
	tables := sysbench.TableNames(3)
	same := map[string]string{"sbtest1": "1", "sbtest2": "2", "sbtest3": "3"}
	tests := []struct {
		name string
		rep  map[string]string
		src  map[string]string
		want string
	}{
		{"equal", same, same, ""},
		{"one differs", map[string]string{"sbtest1": "1", "sbtest2": "9", "sbtest3": "3"}, same, "sbtest2: source 2, replica 9"},
		{"missing on replica", map[string]string{"sbtest1": "1", "sbtest3": "3"}, same, "sbtest2: source 2, replica none"},
		{"null on source", same, map[string]string{"sbtest1": "NULL", "sbtest2": "2", "sbtest3": "3"}, "sbtest1: no checksum on the source"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CompareChecksums(tables, tc.src, tc.rep); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	many := CompareChecksums(sysbench.TableNames(5), map[string]string{}, nil)
	if !strings.HasSuffix(many, "and 2 more") {
		t.Fatalf("many differences: %q", many)
	}
}

func TestBinlogBytes(t *testing.T) {
	// SHOW BINARY LOGS as the mariadb client prints it (dbserver.ParseTable's rows).
	rows := []map[string]string{{"Log_name": "mysql-bin.000001", "File_size": "1000"},
		{"Log_name": "mysql-bin.000002", "File_size": "234"}}
	got, err := BinlogBytes(rows)
	if err != nil || got != 1234 {
		t.Fatalf("BinlogBytes = %d, %v; want 1234", got, err)
	}
	if _, err := BinlogBytes([]map[string]string{{"Log_name": "mysql-bin.000001"}}); err == nil {
		t.Fatal("a row without File_size: no error")
	}
}
