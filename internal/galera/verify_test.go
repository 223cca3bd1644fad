package galera

import (
	"strings"
	"testing"
)

func TestChecksums(t *testing.T) {
	// `mariadb --batch --skip-column-names` output of CHECKSUM TABLE.
	p := parseChecksums("sbtest.sbtest1\t3394213011\nsbtest.sbtest2\t1187602577\n")
	r := parseChecksums("sbtest.sbtest1\t3394213011\nsbtest.sbtest2\t1187602577\n")
	tables := []string{"sbtest1", "sbtest2"}
	if d := compare(tables, p, r); d != "" {
		t.Errorf("equal tables differ: %s", d)
	}
	r["sbtest2"] = "42"
	if d := compare(tables, p, r); !strings.Contains(d, "sbtest2: primary 1187602577, replica 42") {
		t.Errorf("diff = %q", d)
	}
	delete(r, "sbtest1")
	p["sbtest2"] = "NULL"
	d := compare(tables, p, r)
	if !strings.Contains(d, "sbtest1: primary 3394213011, replica none") || !strings.Contains(d, "sbtest2: no checksum on the primary") {
		t.Errorf("diff = %q", d)
	}
}
