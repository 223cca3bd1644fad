package querylog

import (
	"strconv"
	"strings"
)

// Class is what kind of statement a statement is, by its first keyword.
type Class uint8

const (
	ClassOther    Class = iota // SHOW, EXPLAIN, SAVEPOINT, LOCK, PREPARE, COPY, ... and what is not SQL
	ClassSelect                // SELECT, VALUES, TABLE, and WITH ... SELECT
	ClassInsert                // INSERT (and WITH ... INSERT)
	ClassUpdate                // UPDATE
	ClassDelete                // DELETE
	ClassReplace               // REPLACE (MySQL)
	ClassBegin                 // BEGIN [WORK], START TRANSACTION, XA START: opens a transaction
	ClassCommit                // COMMIT, END (PostgreSQL), XA COMMIT: ends one
	ClassRollback              // ROLLBACK, ABORT (PostgreSQL), XA ROLLBACK: ends one
	ClassSet                   // SET, SET autocommit included (it is not a BEGIN)
	ClassUse                   // USE db (MySQL; MariaDB's Init DB reads as one)
	ClassDDL                   // CREATE, ALTER, DROP, TRUNCATE, RENAME, COMMENT ON
	ClassCall                  // CALL
)

var classNames = [...]string{"other", "select", "insert", "update", "delete", "replace",
	"begin", "commit", "rollback", "set", "use", "ddl", "call"}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "class(" + strconv.Itoa(int(c)) + ")"
}

// Begins reports a statement that opens a transaction.
func (c Class) Begins() bool { return c == ClassBegin }

// Ends reports a statement that ends the open transaction. ROLLBACK TO SAVEPOINT is
// ClassOther: the transaction goes on. COMMIT AND CHAIN ends one and opens the next
// without a BEGIN of its own; so does DDL in MySQL (an implicit commit); neither is
// told apart here.
func (c Class) Ends() bool { return c == ClassCommit || c == ClassRollback }

// Classify gives a statement's class from its first keyword, skipping comments and
// opening parentheses (MySQL's /*! */ comments are code, so they count). A text holding
// several statements is classed by the first. It reads a few tokens only, except after
// WITH, where it looks for the statement the common table expressions serve.
func Classify(d Dialect, sql string) Class {
	l := lexer{d: d, s: sql}
	t := l.next()
	for t.kind == tPunct && sql[t.start] == '(' {
		t = l.next()
	}
	if t.kind != tWord {
		return ClassOther
	}
	w := sql[t.start:t.end]
	if c, ok := dml(w); ok {
		return c
	}
	switch {
	case is(w, "with"):
		return l.afterWith()
	case is(w, "set"):
		return ClassSet
	case is(w, "use"):
		return ClassUse
	case is(w, "call"):
		return ClassCall
	case is(w, "create"), is(w, "alter"), is(w, "drop"), is(w, "truncate"), is(w, "rename"):
		return ClassDDL
	case is(w, "comment"):
		if is(l.nextWord(), "on") {
			return ClassDDL
		}
	}
	return l.transaction(w)
}

// dml classes the statements that read or change rows by their keyword.
func dml(w string) (Class, bool) {
	switch {
	case is(w, "select"), is(w, "values"), is(w, "table"):
		return ClassSelect, true
	case is(w, "insert"):
		return ClassInsert, true
	case is(w, "update"):
		return ClassUpdate, true
	case is(w, "delete"):
		return ClassDelete, true
	case is(w, "replace"):
		return ClassReplace, true
	}
	return ClassOther, false
}

// transaction classes the statements that open and end transactions.
func (l *lexer) transaction(w string) Class {
	switch {
	case is(w, "begin"):
		if is(l.nextWord(), "not") { // MariaDB's BEGIN NOT ATOMIC: a compound statement
			return ClassOther
		}
		return ClassBegin
	case is(w, "start"):
		if is(l.nextWord(), "transaction") {
			return ClassBegin
		}
	case is(w, "commit"), is(w, "end"):
		if !is(l.nextWord(), "prepared") {
			return ClassCommit
		}
	case is(w, "rollback"), is(w, "abort"):
		next := l.nextWord()
		if is(next, "work") || is(next, "transaction") {
			next = l.nextWord()
		}
		if !is(next, "to") && !is(next, "prepared") {
			return ClassRollback
		}
	case is(w, "xa"):
		switch next := l.nextWord(); {
		case is(next, "start"), is(next, "begin"):
			return ClassBegin
		case is(next, "commit"):
			return ClassCommit
		case is(next, "rollback"):
			return ClassRollback
		}
	}
	return ClassOther
}

// nextWord is the next token's text if it is a word, else "".
func (l *lexer) nextWord() string {
	if t := l.next(); t.kind == tWord {
		return l.s[t.start:t.end]
	}
	return ""
}

// afterWith finds the statement after WITH's common table expressions: the first
// keyword outside parentheses that starts one.
func (l *lexer) afterWith() Class {
	depth := 0
	for t := l.next(); t.kind != tEnd && t.kind != tBad; t = l.next() {
		switch {
		case t.kind == tPunct && l.s[t.start] == '(':
			depth++
		case t.kind == tPunct && l.s[t.start] == ')':
			depth--
		case t.kind == tPunct && l.s[t.start] == ';' && depth == 0:
			return ClassOther
		case t.kind == tWord && depth == 0:
			if c, ok := dml(l.s[t.start:t.end]); ok {
				return c
			}
		}
	}
	return ClassOther
}

// is compares a word with a lower-case keyword, ignoring ASCII case.
func is(w, kw string) bool { return len(w) == len(kw) && strings.EqualFold(w, kw) }
