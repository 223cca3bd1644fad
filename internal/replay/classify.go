package replay

import (
	"strings"
)

// StatementKind is what a statement does, as the summary groups errors and bytes by it.
type StatementKind string

// The statement kinds. A transaction opens at KindBegin and closes at KindCommit or
// KindRollback; every other statement outside one is a transaction of its own.
const (
	KindSelect   StatementKind = "select"
	KindInsert   StatementKind = "insert"
	KindUpdate   StatementKind = "update"
	KindDelete   StatementKind = "delete"
	KindBegin    StatementKind = "begin"
	KindCommit   StatementKind = "commit"
	KindRollback StatementKind = "rollback"
	KindSet      StatementKind = "set"
	KindShow     StatementKind = "show"
	KindDDL      StatementKind = "ddl"
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

// classifyStatement is the one place a statement is classified: its kind, from its first
// keyword, and its shape, from fingerprint. The querylog package's statement classes and
// fingerprint are meant to replace this function's body, and nothing else.
func classifyStatement(sql string) Class {
	shape := fingerprint(sql)
	c := Class{Kind: kindOf(shape), Shape: shape}
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

// kindOf reads the kind from a shape's first keywords (the shape is lower case, without
// comments or leading blanks).
func kindOf(shape string) StatementKind {
	w, rest, _ := strings.Cut(shape, " ")
	w = strings.TrimRight(w, ";(")
	switch w {
	case "select", "with", "values", "table", "explain", "describe", "desc":
		return KindSelect
	case "insert", "replace", "copy":
		return KindInsert
	case "update":
		return KindUpdate
	case "delete", "truncate":
		return KindDelete
	case "begin", "xa":
		return KindBegin
	case "start":
		if strings.HasPrefix(rest, "transaction") {
			return KindBegin
		}
	case "commit", "end":
		return KindCommit
	case "rollback", "abort":
		if strings.HasPrefix(rest, "to ") {
			return KindOther // ROLLBACK TO SAVEPOINT keeps the transaction open
		}
		return KindRollback
	case "set", "reset":
		return KindSet
	case "show":
		return KindShow
	case "create", "alter", "drop", "rename", "grant", "revoke", "comment":
		return KindDDL
	}
	return KindOther
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

// fingerprint is the statement in lower case with comments dropped, string and number
// literals as ?, runs of blanks as one space, lists of ? as one "?+" and repeated
// VALUES tuples as one, cut to maxShapeLen bytes.
func fingerprint(sql string) string {
	var b strings.Builder
	b.Grow(min(len(sql), maxShapeLen+16))
	space := false
	for i := 0; i < len(sql) && b.Len() < maxShapeLen; {
		c := sql[i]
		switch {
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-', c == '#':
			i = skipTo(sql, i, "\n")
			space = true
			continue
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			i = skipTo(sql, i+2, "*/")
			space = true
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			space = true
			i++
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		switch {
		case c == '\'' || c == '"':
			i = skipQuoted(sql, i, c)
			b.WriteByte('?')
		case strings.IndexByte("eEbBxXnN", c) >= 0 && i+1 < len(sql) && sql[i+1] == '\'' && !prevIsWord(b.String()):
			i = skipQuoted(sql, i+1, '\'') // E'...', X'...', N'...'
			b.WriteByte('?')
		case c == '$' && i+1 < len(sql) && (sql[i+1] == '$' || isDigit(sql[i+1])):
			i = skipDollar(sql, i)
			b.WriteByte('?')
		case isDigit(c) && !prevIsWord(b.String()):
			i = skipNumber(sql, i)
			b.WriteByte('?')
		default:
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			b.WriteByte(c)
			i++
		}
	}
	return foldLists(b.String())
}

// skipTo returns the index just past the next end at or after i (len(s) if none).
func skipTo(s string, i int, end string) int {
	j := strings.Index(s[i:], end)
	if j < 0 {
		return len(s)
	}
	return i + j + len(end)
}

// skipQuoted returns the index past a quoted literal starting at i, with doubled quotes
// and backslash escapes inside it.
func skipQuoted(s string, i int, q byte) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case q:
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}

// skipDollar returns the index past a PostgreSQL $n parameter or $tag$...$tag$ string.
func skipDollar(s string, i int) int {
	j := i + 1
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j > i+1 {
		return j // $1
	}
	end := strings.IndexByte(s[i+1:], '$')
	if end < 0 {
		return len(s)
	}
	tag := s[i : i+end+2]
	return skipTo(s, i+len(tag), tag)
}

func skipNumber(s string, i int) int {
	j := i
	for j < len(s) && (isDigit(s[j]) || s[j] == '.' || s[j] == 'e' || s[j] == 'E' || s[j] == 'x' ||
		(s[j] >= 'a' && s[j] <= 'f') || (s[j] >= 'A' && s[j] <= 'F') ||
		((s[j] == '-' || s[j] == '+') && j > i && (s[j-1] == 'e' || s[j-1] == 'E'))) {
		j++
	}
	return j
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// prevIsWord says whether the shape so far ends inside a name (sbtest1), where a digit
// belongs to the name.
func prevIsWord(s string) bool {
	if s == "" {
		return false
	}
	c := s[len(s)-1]
	return c == '_' || c >= 'a' && c <= 'z' || isDigit(c)
}

// foldLists turns "(?, ?, ?)" into "(?+)" and "values (?+), (?+)" into "values (?+)".
func foldLists(s string) string {
	if !strings.Contains(s, "?,") && !strings.Contains(s, "(?)") {
		return s
	}
	for _, r := range []struct{ from, to string }{{"?, ?", "?"}, {"?,?", "?"}} {
		for strings.Contains(s, r.from) {
			s = strings.ReplaceAll(s, r.from, r.to)
		}
	}
	s = strings.ReplaceAll(s, "(?)", "(?+)")
	for _, sep := range []string{", ", ","} {
		for strings.Contains(s, "(?+)"+sep+"(?+)") {
			s = strings.ReplaceAll(s, "(?+)"+sep+"(?+)", "(?+)")
		}
	}
	return s
}
