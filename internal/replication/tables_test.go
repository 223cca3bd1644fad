package replication

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestTables(t *testing.T) {
	if got := TableNames(SysbenchTables(2)); !slices.Equal(got, []string{"sbtest1", "sbtest2"}) {
		t.Errorf("sysbench tables %v", got)
	}
	want := []string{"pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history"}
	if got := TableNames(PgbenchTables()); !slices.Equal(got, want) {
		t.Errorf("pgbench tables %v, want %v", got, want)
	}
}

// The warm-up moves each table's counter up and back and vacuums; a table that starts
// empty (pgbench_history) has nothing to warm.
func TestWarmUpSQL(t *testing.T) {
	cases := []struct {
		t    Table
		want []string
	}{
		{SysbenchTables(1)[0], []string{`UPDATE "sbtest1" SET "k" = "k" + 1`, `UPDATE "sbtest1" SET "k" = "k" - 1`, `VACUUM "sbtest1"`}},
		{PgbenchTables()[0], []string{`UPDATE "pgbench_accounts" SET "abalance" = "abalance" + 1`,
			`UPDATE "pgbench_accounts" SET "abalance" = "abalance" - 1`, `VACUUM "pgbench_accounts"`}},
		{PgbenchTables()[3], nil},
	}
	for _, c := range cases {
		if got := warmUpSQL(c.t); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.t.Name, got, c.want)
		}
	}
}

// verify reads every table of the Pair on both sides and names the first that differs:
// with pgbench's data set, all four of its tables, history included.
func TestVerifyPgbenchTables(t *testing.T) {
	src, rep := &sql.DB{}, &sql.DB{}
	sums := map[*sql.DB]map[string]string{
		src: {"pgbench_accounts": "100000 rows, md5 a", "pgbench_branches": "1 rows, md5 b", "pgbench_tellers": "10 rows, md5 c", "pgbench_history": "812 rows, md5 d"},
		rep: {"pgbench_accounts": "100000 rows, md5 a", "pgbench_branches": "1 rows, md5 b", "pgbench_tellers": "10 rows, md5 c", "pgbench_history": "811 rows, md5 e"},
	}
	var asked [][]string
	fake := func(_ context.Context, db *sql.DB, ts []Table) (map[string]string, error) {
		asked = append(asked, TableNames(ts))
		return sums[db], nil
	}
	p := &Pair{SrcDB: src, RepDB: rep, Tables: PgbenchTables()}
	err := verify(context.Background(), p, fake)
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "pgbench_history: source 812 rows, md5 d, replica 811 rows, md5 e") {
		t.Errorf("verify = %v, want a mismatch naming pgbench_history", err)
	}
	if len(asked) != 2 || !slices.Equal(asked[0], TableNames(PgbenchTables())) || !slices.Equal(asked[1], asked[0]) {
		t.Errorf("tables read: %v, want pgbench's four on each side", asked)
	}
	sums[rep]["pgbench_history"] = sums[src]["pgbench_history"]
	if err := verify(context.Background(), p, fake); err != nil {
		t.Errorf("equal tables: %v", err)
	}
}
