package replay

import (
	"strings"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/querylog"
)

// StatementKind is what a statement does, as the summary groups errors and bytes by it:
// querylog's class names.
type StatementKind string

// The statement kinds the replayer acts on. A transaction opens at KindBegin and closes
// at KindCommit or KindRollback; every other statement outside one is a transaction of
// its own.
const (
	KindSelect   StatementKind = "select"
	KindInsert   StatementKind = "insert"
	KindUpdate   StatementKind = "update"
	KindDelete   StatementKind = "delete"
	KindBegin    StatementKind = "begin"
	KindCommit   StatementKind = "commit"
	KindRollback StatementKind = "rollback"
	KindSet      StatementKind = "set"
	KindDDL      StatementKind = "ddl"
	KindCall     StatementKind = "call"
	KindOther    StatementKind = "other"
)

// Class is a statement's kind and its shape (the statement with literals stripped), plus
// whether it switches autocommit off or on.
type Class struct {
	Kind  StatementKind
	Shape string
	// Autocommit is +1 for SET autocommit=1, -1 for SET autocommit=0, else 0.
	Autocommit int
}

// maxShapeLen cuts a shape's text: two statements that agree this far are one shape.
const maxShapeLen = 512

// classifyStatement is the one place a statement is classified: its kind and its shape,
// querylog's class and fingerprint.
func classifyStatement(d querylog.Dialect, sql string) Class {
	shape := querylog.Fingerprint(d, sql)
	if len(shape) > maxShapeLen {
		shape = shape[:maxShapeLen]
	}
	c := Class{Kind: StatementKind(querylog.Classify(d, sql).String()), Shape: shape}
	if c.Kind == KindSet {
		s := strings.ReplaceAll(shape, " ", "")
		for _, p := range []string{"setautocommit=", "set@@autocommit=", "setsessionautocommit=", "set@@session.autocommit="} {
			if strings.HasPrefix(s, p) {
				c.Autocommit = autocommitValue(sql)
			}
		}
	}
	return c
}

// dialectOf is the SQL dialect of an engine.
func dialectOf(k engine.Kind) querylog.Dialect {
	if k == engine.Postgres {
		return querylog.PostgreSQL
	}
	return querylog.MySQL
}

// autocommitValue reads SET autocommit=0|1|on|off.
func autocommitValue(sql string) int {
	_, v, ok := strings.Cut(sql, "=")
	if !ok {
		return 0
	}
	switch strings.ToLower(strings.Trim(strings.TrimSpace(v), "'\";")) {
	case "0", "off", "false":
		return -1
	case "1", "on", "true":
		return 1
	}
	return 0
}
