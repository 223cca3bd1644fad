package querylog

// Dialect is the SQL a statement is written in: it decides what quotes and comments are.
type Dialect uint8

const (
	// MySQL: '..' and ".." are strings with \ escapes and doubled quotes, `..` names,
	// # and "-- " start comments, /*! .. */ is code, ? is a placeholder, @x a variable.
	MySQL Dialect = iota + 1
	// PostgreSQL: '..' is a string with doubled quotes (E'..' with \ escapes too), ".."
	// a name, $$..$$ and $tag$..$tag$ strings, /* */ comments nest, $n is a parameter.
	PostgreSQL
)

// Dialect is the SQL of the statements in a log of this format.
func (f Format) Dialect() Dialect {
	if f == PGStderr || f == PGCSV {
		return PostgreSQL
	}
	return MySQL
}

type tokKind uint8

const (
	tEnd    tokKind = iota
	tWord           // a name or keyword
	tQuoted         // a quoted name
	tString         // a string literal, any quoting
	tNumber         // a number literal
	tParam          // a placeholder: ? or $n
	tVar            // a MySQL variable: @x, @@x
	tOp             // an operator
	tPunct          // ( ) , ; . [ ] { }
	tBad            // an unclosed quote or comment: the rest of the statement
)

// token is a slice of the statement; space is whether whitespace or a comment came
// before it.
type token struct {
	kind       tokKind
	start, end int
	space      bool
}

// lexer splits a statement into tokens, skipping whitespace and comments. It never
// fails: what it cannot close is one tBad token to the end.
type lexer struct {
	d    Dialect
	s    string
	i    int
	exec bool // inside a MySQL /*! ... */ comment, whose text is code
}

func (l *lexer) at(k int) byte {
	if l.i+k < len(l.s) {
		return l.s[l.i+k]
	}
	return 0
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}
func isIdent(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '$' }

func (l *lexer) next() token {
	space := false
	for l.i < len(l.s) {
		c := l.s[l.i]
		switch {
		case isSpace(c):
			l.i++
		case c == '-' && l.at(1) == '-' && (l.d == PostgreSQL || l.at(2) == 0 || isSpace(l.at(2))),
			c == '#' && l.d == MySQL:
			for l.i < len(l.s) && l.s[l.i] != '\n' {
				l.i++
			}
		case c == '/' && l.at(1) == '*':
			if !l.comment() {
				return token{kind: tBad, start: l.i, end: len(l.s), space: true}
			}
		case c == '*' && l.at(1) == '/' && l.exec:
			l.i += 2
			l.exec = false
		default:
			start := l.i
			k := l.scan()
			return token{kind: k, start: start, end: l.i, space: space}
		}
		space = true
	}
	return token{kind: tEnd, start: len(l.s), end: len(l.s), space: space}
}

// comment skips a /* */ comment (nested in PostgreSQL), or enters a MySQL /*! */ one.
func (l *lexer) comment() bool {
	if l.d == MySQL && (l.at(2) == '!' || l.at(2) == 'M' && l.at(3) == '!') {
		l.i += 3
		if l.s[l.i-1] == 'M' {
			l.i++
		}
		for l.i < len(l.s) && isDigit(l.s[l.i]) {
			l.i++
		}
		l.exec = true
		return true
	}
	start, depth := l.i, 0
	for l.i+1 < len(l.s) {
		switch {
		case l.s[l.i] == '/' && l.s[l.i+1] == '*' && (depth == 0 || l.d == PostgreSQL):
			depth++
			l.i += 2
		case l.s[l.i] == '*' && l.s[l.i+1] == '/':
			depth--
			l.i += 2
			if depth == 0 {
				return true
			}
		default:
			l.i++
		}
	}
	l.i = start
	return false
}

func (l *lexer) scan() tokKind {
	c := l.s[l.i]
	switch {
	case c == '\'':
		return l.quoted('\'', tString, l.d == MySQL)
	case c == '"' && l.d == MySQL:
		return l.quoted('"', tString, true)
	case c == '"':
		return l.quoted('"', tQuoted, false)
	case c == '`' && l.d == MySQL:
		return l.quoted('`', tQuoted, false)
	case c == '$' && l.d == PostgreSQL:
		return l.dollar()
	case c == '?' && l.d == MySQL:
		l.i++
		return tParam
	case c == '@' && l.d == MySQL:
		return l.variable()
	case isDigit(c) || c == '.' && isDigit(l.at(1)):
		return l.number()
	case isIdentStart(c):
		return l.word()
	case c == '(' || c == ')' || c == ',' || c == ';' || c == '.' || c == '[' || c == ']' || c == '{' || c == '}':
		l.i++
		return tPunct
	}
	return l.operator()
}

// quoted reads a quoted token; a doubled quote is one quote, and with backslash a
// backslash escapes the byte after it.
func (l *lexer) quoted(q byte, k tokKind, backslash bool) tokKind {
	for l.i++; l.i < len(l.s); l.i++ {
		switch c := l.s[l.i]; {
		case c == '\\' && backslash:
			l.i++
		case c == q && l.at(1) == q:
			l.i++
		case c == q:
			l.i++
			return k
		}
	}
	l.i = len(l.s)
	return tBad
}

// dollar reads $n, or a $$..$$ / $tag$..$tag$ string.
func (l *lexer) dollar() tokKind {
	if isDigit(l.at(1)) {
		for l.i++; l.i < len(l.s) && isDigit(l.s[l.i]); l.i++ {
		}
		return tParam
	}
	j := l.i + 1
	for j < len(l.s) && isIdent(l.s[j]) && l.s[j] != '$' {
		j++
	}
	if j >= len(l.s) || l.s[j] != '$' {
		return l.operator()
	}
	tag := l.s[l.i : j+1]
	for k := j + 1; k+len(tag) <= len(l.s); k++ {
		if l.s[k] == '$' && l.s[k:k+len(tag)] == tag {
			l.i = k + len(tag)
			return tString
		}
	}
	l.i = len(l.s)
	return tBad
}

func (l *lexer) variable() tokKind {
	l.i++
	if l.at(0) == '@' {
		l.i++
	}
	if c := l.at(0); c == '\'' || c == '"' || c == '`' {
		l.quoted(c, tVar, true)
		return tVar
	}
	for l.i < len(l.s) && isIdent(l.s[l.i]) {
		l.i++
	}
	return tVar
}

// number reads 12, 1.5e3, .5, 0x41, 0b101; a MySQL name may start with digits (1abc).
func (l *lexer) number() tokKind {
	if l.s[l.i] == '0' && (l.at(1) == 'x' || l.at(1) == 'X' || l.at(1) == 'b' || l.at(1) == 'B') && isIdent(l.at(2)) {
		for l.i += 2; l.i < len(l.s) && isIdent(l.s[l.i]); l.i++ {
		}
		return tNumber
	}
	for l.i < len(l.s) && isDigit(l.s[l.i]) {
		l.i++
	}
	if l.at(0) == '.' {
		for l.i++; l.i < len(l.s) && isDigit(l.s[l.i]); l.i++ {
		}
	}
	if c := l.at(0); (c == 'e' || c == 'E') && (isDigit(l.at(1)) || (l.at(1) == '+' || l.at(1) == '-') && isDigit(l.at(2))) {
		for l.i += 2; l.i < len(l.s) && isDigit(l.s[l.i]); l.i++ {
		}
	}
	if l.d == MySQL && l.i < len(l.s) && isIdentStart(l.s[l.i]) {
		return l.word()
	}
	return tNumber
}

// word reads a name or keyword, or a string with a prefix: E'..', N'..', X'..', B'..',
// U&'..', and MySQL's character-set introducer (_utf8mb4'..').
func (l *lexer) word() tokKind {
	start := l.i
	for l.i < len(l.s) && isIdent(l.s[l.i]) {
		l.i++
	}
	w := l.s[start:l.i]
	if l.at(0) == '&' && l.at(1) == '\'' && (w == "U" || w == "u") && l.d == PostgreSQL {
		l.i++
		return l.quoted('\'', tString, false)
	}
	if l.at(0) != '\'' {
		return tWord
	}
	switch {
	case w == "E" || w == "e":
		return l.quoted('\'', tString, true)
	case len(w) == 1 && (w[0]|0x20 == 'n' || w[0]|0x20 == 'x' || w[0]|0x20 == 'b'):
		return l.quoted('\'', tString, l.d == MySQL)
	case l.d == MySQL && w[0] == '_':
		return l.quoted('\'', tString, true)
	}
	return tWord
}

// operator reads a run of operator characters, as PostgreSQL does: it stops before a
// comment, and gives back a trailing + or - (a sign) unless the run has one of ~!@#%^&|`?.
func (l *lexer) operator() tokKind {
	start := l.i
	for l.i < len(l.s) && l.isOpChar(l.s[l.i]) {
		if l.i > start && (l.s[l.i] == '-' && l.at(1) == '-' || l.s[l.i] == '/' && l.at(1) == '*') {
			break
		}
		l.i++
	}
	if l.i == start {
		l.i++ // a byte no rule knows: a token of its own
		return tOp
	}
	for l.i-start > 1 && (l.s[l.i-1] == '+' || l.s[l.i-1] == '-') {
		special := false
		for _, c := range []byte(l.s[start : l.i-1]) {
			special = special || l.d == PostgreSQL && isSpecialOp(c)
		}
		if special {
			break
		}
		l.i--
	}
	return tOp
}

func (l *lexer) isOpChar(c byte) bool {
	switch c {
	case '+', '-', '*', '/', '<', '>', '=', '~', '!', '%', '^', '&', '|', ':':
		return true
	case '#', '`', '?', '@':
		return l.d == PostgreSQL
	}
	return false
}

func isSpecialOp(c byte) bool {
	switch c {
	case '~', '!', '@', '#', '%', '^', '&', '|', '`', '?':
		return true
	}
	return false
}
