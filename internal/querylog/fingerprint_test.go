package querylog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFingerprint(t *testing.T) {
	cases := []struct {
		d        Dialect
		sql, out string
	}{
		// From the fixtures.
		{MySQL, "SELECT c FROM sbtest1 WHERE id=499", "select c from sbtest1 where id=?"},
		{MySQL, "SELECT c FROM sbtest1 WHERE id BETWEEN 422 AND 521 ORDER BY c", "select c from sbtest1 where id between ? and ? order by c"},
		{MySQL, "UPDATE sbtest1 SET c='4230-1914' WHERE id=503", "update sbtest1 set c=? where id=?"},
		{MySQL, "INSERT INTO sbtest1 (id, k, c, pad) VALUES (506, 505, '8819-6492', '5145-9917')", "insert into sbtest1 (id, k, c, pad) values(?+)"},
		{MySQL, "SELECT c FROM sbtest1 WHERE id=?", "select c from sbtest1 where id=?"},
		{MySQL, "select \"it's\", 'a;b', _utf8mb4'é', 0x41, 1.5e3, \n   NULL", "select ?, ?, ?, ?, ?, ?"},
		{MySQL, "insert into sbtest1 (k, c, pad) values (1, 'multi\nline', 'x')", "insert into sbtest1 (k, c, pad) values(?+)"},
		{MySQL, "update sbtest1 set k=k+1 where id in (1,2,3)", "update sbtest1 set k=k+? where id in(?+)"},
		{MySQL, "USE `sbtest`", "use ?"},
		{MySQL, "select\n  id, k\nfrom sbtest1\nwhere id < 3", "select id, k from sbtest1 where id < ?"},
		{PostgreSQL, "SELECT c FROM sbtest1 WHERE id=$1", "select c from sbtest1 where id=?"},
		{PostgreSQL, "INSERT INTO sbtest2 (id, k, c, pad) VALUES ($1, $2, $3, $4)", "insert into sbtest2 (id, k, c, pad) values(?+)"},
		{PostgreSQL, "select 'it''s', E'a\\nb', $$dollar ; quoted$$, 1.5e3, -- comment\n  /* block */ NULL;", "select ?, ?, ?, ?, ?"},
		{PostgreSQL, "insert into tt values (1, 'x'), (2, 'multi\nline');", "insert into tt values(?+)"},
		{PostgreSQL, "select\n  aid, abalance\nfrom (values (1, 2), (3, 4)) as t(aid, abalance)\nwhere aid < 3;", "select aid, abalance from (values(?+)) as t(aid, abalance) where aid < ?"},
		// Quoting.
		{MySQL, `select 'a\'b', "c\"d", 'e''f' from t`, "select ?, ?, ? from t"},
		{MySQL, "select `Weird Name`, `Plain` from `T`", "select `Weird Name`, plain from t"},
		{PostgreSQL, `select "Weird ""Name""", 'C:\' from t`, `select "Weird ""Name""", ? from t`},
		{PostgreSQL, "select $fn$ body ; 'x' $fn$, $1::int, x'1f', b'101', U&'d\\0061t', n'x'", "select ?, ?::int, ?, ?, ?, ?"},
		{PostgreSQL, "select a#b, a ? 'k', '{}'::jsonb @> '{}'", "select a#b, a ? ?, ?::jsonb @> ?"},
		{MySQL, "select @a := 1, @@global.max_connections", "select @a := ?, @@global.max_connections"},
		// Numbers and signs.
		{MySQL, "select -1, a-1, a - -2, 3e-2, .5, 0b101, 1abc from x where b=-3", "select ?, a-?, a - ?, ?, ?, ?, 1abc from x where b=?"},
		{MySQL, "select * from t where a in (-1, +2, NULL, TRUE)", "select * from t where a in(?+)"},
		// Comments, whitespace, case, trailing semicolons.
		{MySQL, "SELECT /* hint */ a\n\t  FROM t -- tail\n;", "select a from t"},
		{MySQL, "select 1 # MySQL comment\n, 2", "select ? , ?"},
		{MySQL, "/*!40101 SET NAMES utf8 */;", "set names utf8"},
		{PostgreSQL, "select /* a /* nested */ b */ 1", "select ?"},
		// Lists and LIMIT.
		{MySQL, "insert into t values (1, NOW()), (2, NOW())", "insert into t values (?, now()), (?, now())"},
		{MySQL, "select * from t where id in (select id from u)", "select * from t where id in (select id from u)"},
		{MySQL, "select * from t limit 10, 20", "select * from t limit ?"},
		{PostgreSQL, "select * from t limit 10 offset 20", "select * from t limit ?"},
		{MySQL, "select * from t limit 5", "select * from t limit ?"},
		// Broken input never fails.
		{MySQL, "select 'unclosed", "select ?"},
		{PostgreSQL, "select /* unclosed", "select ?"},
		{PostgreSQL, "select $q$ unclosed", "select ?"},
		{MySQL, "", ""},
	}
	for _, c := range cases {
		if got := Fingerprint(c.d, c.sql); got != c.out {
			t.Errorf("Fingerprint(%q)\n got %q\nwant %q", c.sql, got, c.out)
		}
	}
}

// TestFixtureShapes: the sysbench captures of both engines come down to the shapes
// oltp_read_write sends (on sbtest1 and sbtest2), and every one of them is there: no
// value is left in a shape, whichever way the engine logged it.
func TestFixtureShapes(t *testing.T) {
	want := map[string]bool{"begin": true, "commit": true, "rollback": false,
		"select c from sbtest1 where id=?":                                   true,
		"select c from sbtest1 where id between ? and ?":                     true,
		"select sum(k) from sbtest1 where id between ? and ?":                true,
		"select c from sbtest1 where id between ? and ? order by c":          true,
		"select distinct c from sbtest1 where id between ? and ? order by c": true,
		"update sbtest1 set k=k+? where id=?":                                true,
		"update sbtest1 set c=? where id=?":                                  true,
		"delete from sbtest1 where id=?":                                     true,
		"insert into sbtest1 (id, k, c, pad) values(?+)":                     true,
	}
	for _, file := range []string{"mariadb-general-sysbench.log", "mariadb-slow-sysbench.log", "pg-stderr-sysbench.log"} {
		evs, l := readFixture(t, file)
		seen := map[string]bool{}
		for _, ev := range evs {
			if ev.Kind != Query || ev.User == "root" || strings.HasPrefix(ev.SQL, "SET GLOBAL") {
				continue
			}
			shape := strings.ReplaceAll(Fingerprint(l.Format().Dialect(), ev.SQL), "sbtest2", "sbtest1")
			if _, ok := want[shape]; !ok {
				t.Errorf("%s line %d: shape %q of %q", file, ev.Line, shape, ev.SQL)
			}
			seen[shape] = true
		}
		for shape, must := range want {
			if must && !seen[shape] {
				t.Errorf("%s: no %q", file, shape)
			}
		}
	}
}

func BenchmarkFingerprint(b *testing.B) {
	sql := "INSERT INTO sbtest1 (id, k, c, pad) VALUES (506, 505, '88192322217-64926690428-56971021631', '51457784857-99178296768')"
	b.ReportAllocs()
	for b.Loop() {
		Fingerprint(MySQL, sql)
	}
}

func BenchmarkClassify(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Classify(MySQL, "SELECT c FROM sbtest1 WHERE id BETWEEN 422 AND 521 ORDER BY c")
	}
}

// splitSQL cuts a script into its statements at the semicolons the lexer sees.
func splitSQL(d Dialect, script string) []string {
	var out []string
	l := lexer{d: d, s: script}
	start := 0
	for t := l.next(); ; t = l.next() {
		if t.kind == tEnd || t.kind == tPunct && script[t.start] == ';' {
			if s := strings.TrimSpace(script[start:t.start]); s != "" {
				out = append(out, s)
			}
			start = t.end
		}
		if t.kind == tEnd || t.kind == tBad {
			return out
		}
	}
}

// TestMixedSessionsAsSent: the statements the mixed sessions read in each log are, shape
// for shape and in order, those mixed.sql and pgmixed.sql sent (the mysql client drops
// comments, and sends SELECT DATABASE() before the Init DB of a USE; the slow log has
// no Init DB).
func TestMixedSessionsAsSent(t *testing.T) {
	cases := []struct{ log, script, session string }{
		{"mariadb-general-mixed.log", "mixed.sql", "26"},
		{"mariadb-slow-mixed.log", "mixed.sql", "26"},
		{"pg-stderr-mixed.log", "pgmixed.sql", "6b174b5f.192c"},
		{"pg-csvlog-mixed-sysbench.csv", "pgmixed.sql", "6b174b68.196f"},
	}
	for _, c := range cases {
		evs, l := readFixture(t, c.log)
		d := l.Format().Dialect()
		script, err := os.ReadFile(filepath.Join("testdata", c.script))
		if err != nil {
			t.Fatal(err)
		}
		skip := map[string]bool{"select database()": true, "use ?": true}
		var sent, read []string
		for _, s := range splitSQL(d, string(script)) {
			if fp := Fingerprint(d, s); !skip[fp] {
				sent = append(sent, fp)
			}
		}
		for _, ev := range evs {
			if fp := Fingerprint(d, ev.SQL); ev.Kind == Query && ev.Session == c.session && !skip[fp] {
				read = append(read, fp)
			}
		}
		if len(sent) < 9 || strings.Join(sent, "\n") != strings.Join(read, "\n") {
			t.Errorf("%s: read\n%s\nbut %s sent\n%s", c.log, strings.Join(read, "\n"), c.script, strings.Join(sent, "\n"))
		}
	}
}
