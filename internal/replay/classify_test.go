package replay

import "testing"

func TestClassifyStatement(t *testing.T) {
	tests := []struct {
		sql        string
		kind       StatementKind
		shape      string
		autocommit int
	}{
		{"SELECT c FROM sbtest1 WHERE id=4242", KindSelect, "select c from sbtest1 where id=?", 0},
		{"select\n  id, k\nfrom sbtest1\nwhere id < 3", KindSelect, "select id, k from sbtest1 where id < ?", 0},
		{`select "it's", 'a;b', _utf8mb4'é', 0x41, 1.5e3, -- a comment
  /* block */ NULL`, KindSelect, "select ?, _utf8mb4?, null", 0},
		// Lists of literals fold to one, wherever they are.
		{`select 'it''s', E'a\nb', $$dollar ; quoted$$`, KindSelect, "select ?", 0},
		{`select 'it''s', 3 from t`, KindSelect, "select ? from t", 0},
		{"  /* hint */ UPDATE sbtest1 SET k=k+1 WHERE id IN (1, 2, 3)", KindUpdate, "update sbtest1 set k=k+? where id in (?+)", 0},
		{"INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y'), (3, 'z')", KindInsert, "insert into t (a, b) values (?+)", 0},
		{"select v from tt where id = $1", KindSelect, "select v from tt where id = ?", 0},
		{"DELETE FROM sbtest1 WHERE id=5", KindDelete, "delete from sbtest1 where id=?", 0},
		{"BEGIN", KindBegin, "begin", 0},
		{"start transaction read only", KindBegin, "start transaction read only", 0},
		{"COMMIT", KindCommit, "commit", 0},
		{"rollback", KindRollback, "rollback", 0},
		{"ROLLBACK TO SAVEPOINT a", KindOther, "rollback to savepoint a", 0},
		{"SET autocommit=0", KindSet, "set autocommit=?", -1},
		{"set @@autocommit = ON", KindSet, "set @@autocommit = on", 1},
		{"SET NAMES utf8mb4", KindSet, "set names utf8mb4", 0},
		{"show tables", KindShow, "show tables", 0},
		{"CREATE TABLE x (id int)", KindDDL, "create table x (id int)", 0},
		{"USE sbtest", KindOther, "use sbtest", 0},
		{"with a as (select 1) select * from a", KindSelect, "with a as (select ?) select * from a", 0},
	}
	for _, tt := range tests {
		c := classifyStatement(tt.sql)
		if c.Kind != tt.kind || c.Shape != tt.shape || c.Autocommit != tt.autocommit {
			t.Errorf("%q: %+v; want %s %q autocommit %d", tt.sql, c, tt.kind, tt.shape, tt.autocommit)
		}
	}
}

func TestFingerprintIsCut(t *testing.T) {
	long := "select '" + string(make([]byte, 10)) + "'"
	for i := 0; i < 200; i++ {
		long += ", col" + string(rune('a'+i%26))
	}
	if s := fingerprint(long); len(s) > maxShapeLen+8 {
		t.Errorf("shape of %d bytes, want at most about %d", len(s), maxShapeLen)
	}
}
