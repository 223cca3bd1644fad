package replay

import (
	"testing"

	"github.com/wirelab/wirelab/internal/querylog"
)

func TestClassifyStatement(t *testing.T) {
	tests := []struct {
		d          querylog.Dialect
		sql        string
		kind       StatementKind
		shape      string
		autocommit int
	}{
		{querylog.MySQL, "SELECT c FROM sbtest1 WHERE id=4242", KindSelect, "select c from sbtest1 where id=?", 0},
		{querylog.MySQL, "BEGIN", KindBegin, "begin", 0},
		{querylog.MySQL, "start transaction read only", KindBegin, "start transaction read only", 0},
		{querylog.MySQL, "COMMIT", KindCommit, "commit", 0},
		{querylog.MySQL, "ROLLBACK TO SAVEPOINT a", KindOther, "rollback to savepoint a", 0},
		{querylog.MySQL, "SET autocommit=0", KindSet, "set autocommit=?", -1},
		{querylog.MySQL, "set @@autocommit = ON", KindSet, "set @@autocommit = on", 1},
		{querylog.MySQL, "SET NAMES utf8mb4", KindSet, "set names utf8mb4", 0},
		{querylog.PostgreSQL, "select v from tt where id = $1", KindSelect, "select v from tt where id = ?", 0},
		{querylog.PostgreSQL, "end", KindCommit, "end", 0},
	}
	for _, tt := range tests {
		c := classifyStatement(tt.d, tt.sql)
		if c.Kind != tt.kind || c.Shape != tt.shape || c.Autocommit != tt.autocommit {
			t.Errorf("%q: %+v; want %s %q autocommit %d", tt.sql, c, tt.kind, tt.shape, tt.autocommit)
		}
	}
}
