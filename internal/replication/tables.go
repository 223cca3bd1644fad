package replication

import (
	"github.com/lib/pq"

	"github.com/wirelab/wirelab/internal/sysbench"
)

// Table is one table of the data set the Pair compares after every point: its name, the
// key that orders its rows for PostgreSQL's checksum ("" for a table without one: its
// rows' md5s are sorted instead) and an integer column PostgreSQL's warm-up raises and
// lowers by one in every row ("" for a table that starts empty and has nothing to warm).
// MariaDB's CHECKSUM TABLE needs only the name.
type Table struct {
	Name, Key, Counter string
}

// SysbenchTables are sysbench's n tables: sbtest1..n, keyed by id, k the warm-up's column
// (it is indexed, so the warm-up writes the k index too).
func SysbenchTables(n int) []Table {
	names := sysbench.TableNames(n)
	out := make([]Table, len(names))
	for i, name := range names {
		out[i] = Table{Name: name, Key: "id", Counter: "k"}
	}
	return out
}

// PgbenchTables are the four tables pgbench -i creates. Accounts, branches and tellers are
// keyed and carry a balance; history has no key and is empty after pgbench -i (pgbench
// truncates it before every run, too).
func PgbenchTables() []Table {
	return []Table{
		{Name: "pgbench_accounts", Key: "aid", Counter: "abalance"},
		{Name: "pgbench_branches", Key: "bid", Counter: "bbalance"},
		{Name: "pgbench_tellers", Key: "tid", Counter: "tbalance"},
		{Name: "pgbench_history"},
	}
}

// TableNames are the tables' names, in order.
func TableNames(ts []Table) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// warmUpSQL writes every heap and index page of t once and leaves its data as it was: the
// counter up by one and back in every row (non-HOT updates on full pages, so the key's
// index is written too), then VACUUM clears the dead versions. A table without a counter
// needs none.
func warmUpSQL(t Table) []string {
	if t.Counter == "" {
		return nil
	}
	q, c := pq.QuoteIdentifier(t.Name), pq.QuoteIdentifier(t.Counter)
	return []string{"UPDATE " + q + " SET " + c + " = " + c + " + 1", "UPDATE " + q + " SET " + c + " = " + c + " - 1", "VACUUM " + q}
}
