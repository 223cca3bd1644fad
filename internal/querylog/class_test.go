package querylog

import (
	"testing"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		d    Dialect
		sql  string
		want Class
	}{
		// From the fixtures: what mixed.sql, pgmixed.sql and sysbench sent.
		{MySQL, "select 1", ClassSelect},
		{MySQL, "select\n  id, k\nfrom sbtest1\nwhere id < 3", ClassSelect},
		{MySQL, "SELECT DATABASE()", ClassSelect},
		{MySQL, "insert into sbtest1 (k, c, pad) values (1, 'multi\nline', 'x')", ClassInsert},
		{MySQL, "begin", ClassBegin},
		{MySQL, "BEGIN", ClassBegin},
		{MySQL, "update sbtest1 set k=k+1 where id in (1,2,3)", ClassUpdate},
		{MySQL, "rollback", ClassRollback},
		{MySQL, "COMMIT", ClassCommit},
		{MySQL, "DELETE FROM sbtest1 WHERE id=506", ClassDelete},
		{MySQL, "SET GLOBAL general_log=0", ClassSet},
		{MySQL, "USE `sbtest`", ClassUse},
		{PostgreSQL, "begin;", ClassBegin},
		{PostgreSQL, "create temp table tt (id int primary key, v text);", ClassDDL},
		{PostgreSQL, "prepare q(int) as select v from tt where id = $1;", ClassOther},
		{PostgreSQL, "execute q(2);", ClassOther},
		{PostgreSQL, "commit;", ClassCommit},
		{PostgreSQL, "CREATE INDEX k_1 ON sbtest1(k)", ClassDDL},
		// Transactions.
		{MySQL, "START TRANSACTION READ ONLY", ClassBegin},
		{MySQL, "begin work", ClassBegin},
		{MySQL, "BEGIN NOT ATOMIC SELECT 1; END", ClassOther},
		{MySQL, "start slave", ClassOther},
		{MySQL, "SET autocommit=0", ClassSet},
		{MySQL, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED", ClassSet},
		{MySQL, "ROLLBACK TO SAVEPOINT a", ClassOther},
		{MySQL, "ROLLBACK WORK TO a", ClassOther},
		{MySQL, "rollback work", ClassRollback},
		{MySQL, "SAVEPOINT a", ClassOther},
		{MySQL, "commit and chain", ClassCommit},
		{MySQL, "XA START 'x'", ClassBegin},
		{MySQL, "XA COMMIT 'x'", ClassCommit},
		{PostgreSQL, "END", ClassCommit},
		{PostgreSQL, "abort", ClassRollback},
		{PostgreSQL, "COMMIT PREPARED 'x'", ClassOther},
		{PostgreSQL, "BEGIN ISOLATION LEVEL SERIALIZABLE", ClassBegin},
		// Comments, parentheses, WITH, MySQL's executable comments.
		{MySQL, "/* app:42 */ SELECT 1", ClassSelect},
		{MySQL, "-- note\nUPDATE t SET a=1", ClassUpdate},
		{MySQL, "# note\nDELETE FROM t", ClassDelete},
		{MySQL, "/*!40101 SET NAMES utf8 */", ClassSet},
		{MySQL, "(SELECT 1) UNION (SELECT 2)", ClassSelect},
		{PostgreSQL, "/* a /* nested */ one */ insert into t values (1)", ClassInsert},
		{PostgreSQL, "WITH x AS (SELECT id FROM t) UPDATE t SET v = 1 FROM x WHERE t.id = x.id", ClassUpdate},
		{PostgreSQL, "with recursive r(n) as (select 1 union all select n+1 from r) select * from r", ClassSelect},
		{MySQL, "WITH d AS (SELECT 1) DELETE FROM t", ClassDelete},
		{PostgreSQL, "values (1), (2)", ClassSelect},
		// The rest.
		{MySQL, "REPLACE INTO t VALUES (1)", ClassReplace},
		{MySQL, "CALL p(1)", ClassCall},
		{MySQL, "ALTER TABLE t ADD c int", ClassDDL},
		{MySQL, "TRUNCATE t", ClassDDL},
		{MySQL, "RENAME TABLE a TO b", ClassDDL},
		{PostgreSQL, "COMMENT ON TABLE t IS 'x'", ClassDDL},
		{MySQL, "SHOW TABLES", ClassOther},
		{MySQL, "EXPLAIN SELECT 1", ClassOther},
		{PostgreSQL, "COPY t FROM STDIN", ClassOther},
		{MySQL, "", ClassOther},
		{MySQL, "   ;", ClassOther},
		{MySQL, "'not a statement", ClassOther},
	}
	for _, c := range cases {
		if got := Classify(c.d, c.sql); got != c.want {
			t.Errorf("Classify(%q) = %s, want %s", c.sql, got, c.want)
		}
	}
}

func TestClassTransactions(t *testing.T) {
	for c := ClassOther; c <= ClassCall; c++ {
		if c.Begins() != (c == ClassBegin) || c.Ends() != (c == ClassCommit || c == ClassRollback) {
			t.Errorf("%s: Begins %v Ends %v", c, c.Begins(), c.Ends())
		}
	}
	if ClassDDL.String() != "ddl" || Class(99).String() != "class(99)" {
		t.Errorf("names: %s %s", ClassDDL, Class(99))
	}
}

// TestFixtureTransactions counts the sysbench captures' transactions from the classes:
// oltp_read_write runs BEGIN ... COMMIT, so every capture has as many of each.
func TestFixtureTransactions(t *testing.T) {
	for _, file := range []string{"mariadb-general-sysbench.log", "mariadb-slow-sysbench.log", "pg-stderr-sysbench.log"} {
		evs, l := readFixture(t, file)
		begins, ends, selects := 0, 0, 0
		for _, ev := range evs {
			if ev.Kind != Query {
				continue
			}
			c := Classify(l.Format().Dialect(), ev.SQL)
			begins += b2i(c.Begins())
			ends += b2i(c.Ends())
			selects += b2i(c == ClassSelect)
		}
		if begins == 0 || begins != ends || selects < 10*begins {
			t.Errorf("%s: %d begins, %d ends, %d selects", file, begins, ends, selects)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
