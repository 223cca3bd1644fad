package querylog

import (
	"bytes"
	"fmt"
	"time"
)

// What PostgreSQL's stderr log (in pgreplay's format) and its csvlog share: the messages
// log_statement=all, log_connections and log_disconnections write, read as pgreplay
// reads them (parse.c), plus what pgreplay leaves out:
//
//	connection authorized: ...        Connect (held: a FATAL after it fails it)
//	disconnection: ...                Quit
//	statement: SQL                    Query (a statement sent as text)
//	execute NAME: SQL                 Query, Command "Execute", Stmt NAME ("<unnamed>": "")
//	  DETAIL: parameters: $1 = '..'   its Params (NULL: Null[i])
//	duration: N ms                    its Duration (log_duration, or log_min_duration_statement
//	                                  after a statement already logged)
//	duration: N ms  statement: SQL    Query with Duration, started N ms before the line
//	duration: N ms  execute NAME: SQL the same for an execution
//	duration: N ms  parse NAME: SQL   Prepare for a named statement (the unnamed one and
//	                                  bind travel with their execute: no round trip)
//	fastpath function call: ...       Admin "Function call"
//	ERROR: message                    the Err of the session's statement; a statement that
//	                                  failed before it was logged (a syntax error) comes as
//	                                  a Query with Err from the STATEMENT line (csvlog: the
//	                                  query column) that follows
//	FATAL: message                    a session that never connected: a Connect with Err
//	                                  (for a session not open, its prefix naming a user)
//
// Everything else (checkpoints, connection received, HINT, CONTEXT, ...) makes no event.
// A statement is held until its session's next line, so its parameters, error and
// duration can still be added: lines of other sessions may come between.
type pgState struct {
	max        int
	user, db   string // the last ones seen, so lines of one session share the strings
	paramsBuf  []string
	nullBuf    []bool
	unquoteBuf []byte
}

type pgLevel uint8

const (
	lvOther pgLevel = iota
	lvLog
	lvError
	lvFatal
	lvDetail
	lvStatement
)

func level(b []byte) pgLevel {
	switch string(b) {
	case "LOG":
		return lvLog
	case "ERROR":
		return lvError
	case "FATAL", "PANIC":
		return lvFatal
	case "DETAIL":
		return lvDetail
	case "STATEMENT":
		return lvStatement
	}
	return lvOther
}

// pgEntry is one log entry of either layout; msg, detail and query point into the
// parser's buffers.
type pgEntry struct {
	line          int64
	t             time.Time
	user, db, sid string
	level         pgLevel
	msg           []byte
	detail        []byte // csvlog's detail column (stderr writes DETAIL as an entry of its own)
	query         []byte // csvlog's query column: the statement an ERROR belongs to
}

func (p *pgState) handle(s *stream, e *pgEntry) error {
	switch e.level {
	case lvLog:
		if err := p.log(s, e); err != nil {
			return err
		}
		if len(e.detail) > 0 {
			return p.detail(s, e, e.detail)
		}
	case lvDetail:
		return p.detail(s, e, e.msg)
	case lvError:
		p.failed(s, e)
	case lvStatement:
		p.statementLine(s, e)
	case lvFatal:
		p.fatal(s, e)
	}
	return nil
}

func (p *pgState) log(s *stream, e *pgEntry) error {
	msg, dur := e.msg, time.Duration(-1)
	if rest, ok := bytes.CutPrefix(msg, []byte("duration: ")); ok {
		i := bytes.Index(rest, []byte(" ms"))
		d, err := decimal(rest[:max(i, 0)], time.Millisecond)
		if i < 0 || err != nil {
			return badLine(e.line, e.msg, "unreadable duration")
		}
		if rest = rest[i+3:]; len(rest) == 0 {
			p.duration(s, e, d)
			return nil
		}
		msg, dur = bytes.TrimLeft(rest, " "), d
	}
	if !sessionAction(msg) {
		return nil // lock waits, temporary files, ...: nothing the session sent
	}
	if ss := s.open[e.sid]; ss != nil {
		s.release(ss) // the session has moved on: its statement is complete
	}
	switch {
	case bytes.HasPrefix(msg, []byte("connection authorized: ")):
		ev := p.event(s, e, Connect, -1)
		s.connect(e.sid, ev, true)
	case bytes.HasPrefix(msg, []byte("disconnection: ")):
		ev := p.event(s, e, Quit, -1)
		s.quit(s.ensure(e.sid, ev), ev)
	case bytes.HasPrefix(msg, []byte("statement: ")):
		p.statement(s, e, Query, msg[len("statement: "):], "", "", dur)
	case bytes.HasPrefix(msg, []byte("execute ")):
		return p.named(s, e, Query, msg[len("execute "):], dur)
	case bytes.HasPrefix(msg, []byte("parse ")):
		return p.named(s, e, Prepare, msg[len("parse "):], dur)
	case bytes.HasPrefix(msg, []byte("fastpath function call: ")):
		ev := p.event(s, e, Admin, dur)
		ev.Command, ev.SQL = "Function call", string(msg[len("fastpath function call: "):])
		ev.Session = s.ensure(e.sid, ev).id
		s.emit(ev, nil, false)
	}
	return nil
}

// sessionActions start the LOG messages of what a session did; a held statement is
// complete when its session does something else.
var sessionActions = [][]byte{[]byte("connection authorized: "), []byte("disconnection: "),
	[]byte("statement: "), []byte("execute "), []byte("parse "), []byte("bind "),
	[]byte("fastpath function call: ")}

func sessionAction(msg []byte) bool {
	for _, a := range sessionActions {
		if bytes.HasPrefix(msg, a) {
			return true
		}
	}
	return false
}

// event starts an event of the entry; a duration moves its time to when it started.
func (p *pgState) event(s *stream, e *pgEntry, k Kind, dur time.Duration) Event {
	t := e.t
	if dur > 0 {
		t = t.Add(-dur)
	}
	ev := s.event(k, e.line, t)
	ev.Duration, ev.User, ev.DB, ev.Session = dur, e.user, e.db, e.sid
	return ev
}

// named reads "NAME: SQL" after execute or parse.
func (p *pgState) named(s *stream, e *pgEntry, k Kind, rest []byte, dur time.Duration) error {
	i := bytes.Index(rest, []byte(": "))
	if i < 0 {
		return badLine(e.line, e.msg, "statement name without \": \" after it")
	}
	name := rest[:i]
	if string(name) == "<unnamed>" {
		if k == Prepare {
			return nil
		}
		name = nil
	}
	p.statement(s, e, k, rest[i+2:], "Execute", string(name), dur)
	return nil
}

func (p *pgState) statement(s *stream, e *pgEntry, k Kind, sql []byte, command, stmt string, dur time.Duration) {
	ev := p.event(s, e, k, dur)
	if k == Prepare {
		command = ""
	}
	ev.SQL, ev.Command, ev.Stmt = string(sql), command, stmt
	ss := s.ensure(e.sid, ev)
	ss.lastSQL, ss.orphan = ev.SQL, ""
	s.emit(ev, ss, k == Query)
}

// duration adds a bare "duration:" line to its session's statement.
func (p *pgState) duration(s *stream, e *pgEntry, d time.Duration) {
	if ss := s.open[e.sid]; ss != nil {
		if held := s.heldEvent(ss); held != nil && held.Duration < 0 {
			held.Duration = d
		}
	}
}

// detail adds "parameters: $1 = '...', $2 = NULL" to its session's execution.
func (p *pgState) detail(s *stream, e *pgEntry, text []byte) error {
	rest, ok := bytes.CutPrefix(text, []byte("parameters: "))
	ss := s.open[e.sid]
	if !ok || ss == nil {
		return nil
	}
	held := s.heldEvent(ss)
	if held == nil || held.Command != "Execute" || held.Params != nil {
		return nil
	}
	params, nulls, err := p.parameters(rest)
	if err != nil {
		return badLine(e.line, text, err.Error())
	}
	held.Params, held.Null = params, nulls
	return nil
}

// parameters reads the values of $1..$n as the log quotes them.
func (p *pgState) parameters(b []byte) ([]string, []bool, error) {
	p.paramsBuf, p.nullBuf = p.paramsBuf[:0], p.nullBuf[:0]
	for len(b) > 0 {
		n := len(p.paramsBuf) + 1
		if len(b) < 2 || b[0] != '$' {
			return nil, nil, fmt.Errorf("parameter %d: no $", n)
		}
		i := 1
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if v, err := count(b[1:i]); err != nil || v != int64(n) {
			return nil, nil, fmt.Errorf("parameter %d: $%s out of order", n, b[1:i])
		}
		rest, ok := bytes.CutPrefix(b[i:], []byte(" = "))
		if !ok {
			return nil, nil, fmt.Errorf("parameter %d: no \" = \"", n)
		}
		v, null, rest, err := p.value(rest)
		if err != nil {
			return nil, nil, fmt.Errorf("parameter %d: %w", n, err)
		}
		p.paramsBuf, p.nullBuf = append(p.paramsBuf, v), append(p.nullBuf, null)
		b, _ = bytes.CutPrefix(rest, []byte(", "))
	}
	return append([]string(nil), p.paramsBuf...), append([]bool(nil), p.nullBuf...), nil
}

// value reads a quoted value (a quote inside is doubled) or NULL.
func (p *pgState) value(b []byte) (v string, null bool, rest []byte, err error) {
	if r, ok := bytes.CutPrefix(b, []byte("NULL")); ok {
		return "", true, r, nil
	}
	if len(b) == 0 || b[0] != '\'' {
		return "", false, nil, fmt.Errorf("value neither quoted nor NULL")
	}
	p.unquoteBuf = p.unquoteBuf[:0]
	for i := 1; i < len(b); i++ {
		if b[i] != '\'' {
			p.unquoteBuf = append(p.unquoteBuf, b[i])
			continue
		}
		if i+1 < len(b) && b[i+1] == '\'' {
			p.unquoteBuf = append(p.unquoteBuf, '\'')
			i++
			continue
		}
		return string(p.unquoteBuf), false, b[i+1:], nil
	}
	return "", false, nil, fmt.Errorf("quoted value without its closing quote")
}

// failed takes an ERROR: the session's held statement failed, or (csvlog) the one in
// the query column did before it was logged, or (stderr) the STATEMENT line after it
// names that one.
func (p *pgState) failed(s *stream, e *pgEntry) {
	ss := s.open[e.sid]
	if ss == nil {
		return
	}
	if held := s.heldEvent(ss); held != nil && held.Kind == Query && held.Err == "" {
		held.Err = string(e.msg)
		return
	}
	if e.query == nil {
		ss.orphan = string(e.msg)
		return
	}
	if len(e.query) > 0 && string(e.query) != ss.lastSQL {
		ev := p.event(s, e, Query, -1)
		ev.SQL, ev.Err = string(e.query), string(e.msg)
		ss.lastSQL = ev.SQL
		s.emit(ev, nil, false)
	}
}

// statementLine takes the STATEMENT line after an ERROR no logged statement took.
func (p *pgState) statementLine(s *stream, e *pgEntry) {
	ss := s.open[e.sid]
	if ss == nil || ss.orphan == "" {
		return
	}
	if string(e.msg) != ss.lastSQL {
		ev := p.event(s, e, Query, -1)
		ev.SQL, ev.Err = string(e.msg), ss.orphan
		ss.lastSQL = ev.SQL
		s.emit(ev, nil, false)
	}
	ss.orphan = ""
}

// fatal takes a FATAL: a login that failed, after its "connection authorized" line or
// with none. A FATAL ending an open session is followed by its disconnection line.
func (p *pgState) fatal(s *stream, e *pgEntry) {
	if ss := s.open[e.sid]; ss != nil {
		if held := s.heldEvent(ss); held != nil && held.Kind == Connect && held.Err == "" {
			held.Err = string(e.msg)
			s.drop(ss)
		}
		return
	}
	if e.user == "" || e.user == "[unknown]" {
		return // a server process, not a client's login
	}
	ev := p.event(s, e, Connect, -1)
	ev.Err = string(e.msg)
	s.emit(ev, nil, false)
}
