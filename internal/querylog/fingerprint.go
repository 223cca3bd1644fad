package querylog

import (
	"bytes"
	"sync"
)

// Fingerprint gives a statement's shape, as pt-query-digest's fingerprint does, so that
// statements that differ only in their values group together:
//
//	SELECT c FROM sbtest1 WHERE id=499          select c from sbtest1 where id=?
//	SELECT c FROM sbtest1 WHERE id=$1           select c from sbtest1 where id=?
//	insert into t values (1,'a'),(2,'b')        insert into t values(?+)
//	select * from t where id in (1, 2, 3)       select * from t where id in(?+)
//	select * from t limit 10, 20                select * from t limit ?
//	use `sbtest`                                use ?
//
// Strings, numbers (a sign before one included), NULL, TRUE, FALSE and placeholders
// become ?; a list of them after IN, or lists after VALUES, becomes (?+); comments go;
// whitespace runs become one space (tokens written together stay together, as
// pt-query-digest keeps them); names and keywords are folded to lower case except
// PostgreSQL's quoted ones; a trailing ';' goes. It lexes once, by hand, and allocates
// the result only.
func Fingerprint(d Dialect, sql string) string {
	f := fingerprinters.Get().(*fingerprinter)
	out := f.run(d, sql)
	if cap(f.out) <= 1<<20 {
		fingerprinters.Put(f)
	}
	return out
}

var fingerprinters = sync.Pool{New: func() any { return new(fingerprinter) }}

type fingerprinter struct {
	d    Dialect
	s    string
	toks []token
	out  []byte
}

func (f *fingerprinter) run(d Dialect, sql string) string {
	f.d, f.s, f.toks, f.out = d, sql, f.toks[:0], f.out[:0]
	l := lexer{d: d, s: sql}
	for t := l.next(); t.kind != tEnd; t = l.next() {
		f.toks = append(f.toks, t)
		if t.kind == tBad {
			break
		}
	}
	if f.isUse() {
		return "use ?"
	}
	for i := 0; i < len(f.toks); i++ {
		i = f.emit(i)
	}
	f.out = bytes.TrimRight(f.out, " ;")
	return string(f.out)
}

func (f *fingerprinter) text(i int) string { return f.s[f.toks[i].start:f.toks[i].end] }

func (f *fingerprinter) punct(i int, c byte) bool {
	return i < len(f.toks) && f.toks[i].kind == tPunct && f.s[f.toks[i].start] == c
}

// emit writes token i (and what it collapses with it) and returns the last one used.
func (f *fingerprinter) emit(i int) int {
	t := f.toks[i]
	switch t.kind {
	case tWord:
		w := f.text(i)
		switch {
		case isValueWord(w):
			f.put(t.space, "?")
		case is(w, "in"), is(w, "values"), is(w, "value"):
			if j := f.lists(i+1, !is(w, "in")); j > i {
				f.putLower(t.space, w)
				f.out = append(f.out, "(?+)"...)
				return j
			}
			f.putLower(t.space, w)
		case is(w, "limit"):
			if j := f.limit(i + 1); j > i {
				f.put(t.space, "limit ?")
				return j
			}
			f.putLower(t.space, w)
		default:
			f.putLower(t.space, w)
		}
	case tString, tNumber, tParam, tBad:
		f.put(t.space, "?")
	case tOp:
		if f.sign(i) {
			f.put(t.space, "?")
			return i + 1
		}
		f.put(t.space, f.text(i))
	case tQuoted:
		f.putQuoted(i)
	case tVar:
		f.putLower(t.space, f.text(i))
	default:
		f.put(t.space, f.text(i))
	}
	return i
}

func isValueWord(w string) bool { return is(w, "null") || is(w, "true") || is(w, "false") }

// sign reports a + or - that is a number's sign, not an operator: written against the
// number, after an operator, an opening parenthesis, a comma or a keyword.
func (f *fingerprinter) sign(i int) bool {
	w := f.text(i)
	if (w != "-" && w != "+") || i+1 >= len(f.toks) || f.toks[i+1].kind != tNumber || f.toks[i+1].space {
		return false
	}
	if i == 0 {
		return true
	}
	switch p := f.toks[i-1]; p.kind {
	case tOp:
		return true
	case tPunct:
		c := f.s[p.start]
		return c == '(' || c == ',' || c == '['
	case tWord:
		return signKeywords[lowerASCII(f.text(i-1))]
	}
	return false
}

var signKeywords = map[string]bool{"select": true, "where": true, "and": true, "or": true,
	"not": true, "when": true, "then": true, "else": true, "set": true, "by": true, "in": true,
	"is": true, "like": true, "between": true, "case": true, "on": true, "having": true,
	"return": true, "values": true, "limit": true, "offset": true, "interval": true}

// value returns the last token of a literal starting at i, or -1.
func (f *fingerprinter) value(i int) int {
	if i >= len(f.toks) {
		return -1
	}
	switch t := f.toks[i]; t.kind {
	case tString, tNumber, tParam:
		return i
	case tWord:
		if isValueWord(f.text(i)) {
			return i
		}
	case tOp:
		if f.sign(i) {
			return i + 1
		}
	}
	return -1
}

// lists returns the last token of "(lit, lit, ...)" at i — with more, after commas,
// for VALUES — or -1.
func (f *fingerprinter) lists(i int, more bool) int {
	last := -1
	for f.punct(i, '(') {
		j := f.value(i + 1)
		for j >= 0 && f.punct(j+1, ',') {
			j = f.value(j + 2)
		}
		if j < 0 || !f.punct(j+1, ')') {
			break
		}
		last = j + 1
		if !more || !f.punct(last+1, ',') {
			break
		}
		i = last + 2
	}
	return last
}

// limit returns the last token of "lit", "lit, lit" or "lit OFFSET lit" at i, or -1.
func (f *fingerprinter) limit(i int) int {
	j := f.value(i)
	if j < 0 {
		return -1
	}
	if f.punct(j+1, ',') || j+1 < len(f.toks) && f.toks[j+1].kind == tWord && is(f.text(j+1), "offset") {
		if k := f.value(j + 2); k >= 0 {
			return k
		}
	}
	return j
}

// isUse reports "USE db": every database is one shape.
func (f *fingerprinter) isUse() bool {
	n := len(f.toks)
	if n > 0 && f.punct(n-1, ';') {
		n--
	}
	return n == 2 && f.toks[0].kind == tWord && is(f.text(0), "use") &&
		(f.toks[1].kind == tWord || f.toks[1].kind == tQuoted)
}

func (f *fingerprinter) put(space bool, s string) {
	if space && len(f.out) > 0 {
		f.out = append(f.out, ' ')
	}
	f.out = append(f.out, s...)
}

func (f *fingerprinter) putLower(space bool, s string) {
	if space && len(f.out) > 0 {
		f.out = append(f.out, ' ')
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		f.out = append(f.out, c)
	}
}

// putQuoted writes a quoted name: a MySQL `name` that needs no quotes as the plain
// name (names fold to lower case there), anything else as written.
func (f *fingerprinter) putQuoted(i int) {
	t, w := f.toks[i], f.text(i)
	if f.d == MySQL && len(w) > 2 && w[0] == '`' {
		inner := w[1 : len(w)-1]
		plain := isIdentStart(inner[0])
		for j := 0; j < len(inner) && plain; j++ {
			plain = isIdent(inner[j])
		}
		if plain {
			f.putLower(t.space, inner)
			return
		}
	}
	f.put(t.space, w)
}

func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
