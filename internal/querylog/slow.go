package querylog

import (
	"bytes"
	"fmt"
	"time"
)

// slowParser reads the MariaDB/MySQL slow log written with long_query_time=0. An entry is
//
//	# Time: 261208  0:11:56                      (MariaDB: only when the second changes)
//	# Time: 2024-01-02T03:04:05.123456Z          (MySQL 5.7+: every entry, when it ended)
//	# User@Host: sbtest[sbtest] @  [198.18.1.2]  (MySQL adds "Id: N")
//	# Thread_id: 26  Schema: sbtest  QC_hit: No  (MariaDB)
//	# Query_time: 0.000154  Lock_time: 0.000000  Rows_sent: 1  Rows_examined: 0
//	# Rows_affected: 0  Bytes_sent: 58           (MariaDB)
//	use `sbtest`;                                (when the database differs from the entry before)
//	SET timestamp=1796688716;                    (the second the statement started)
//	select 1;
//
// The statement runs until the next "# Time:" or "# User@Host:" line; the server ends it
// with ';', which the reader takes off. An entry is written when its statement ends, so
// entries come in the order statements finished: a session's are in order, but the
// offsets of different sessions' entries need not rise. Each entry's time is when its
// statement started: MySQL's Start (log_slow_extra) or its "# Time" less Query_time
// (microseconds), else the SET timestamp second (MariaDB: offsets in whole seconds).
//
// The log has no connection lines: a session opens (an implied Connect) at its first
// entry and closes (an implied Quit) at the end of the log, and an entry whose database
// differs from its session's last one is preceded by an implied "Init DB" Query (the
// change of database a client makes with COM_INIT_DB, which the slow log does not show).
type slowParser struct {
	max int
	sql []byte

	clock   time.Time // from the last "# Time:" line
	clockUS bool      // that line had microseconds (MySQL: every entry has one)
	fresh   bool      // it was printed for the entry being read
	useDB   string    // from the last "use db;" line

	id           []byte // the entry's thread id
	user, schema string // the last ones read, so entries share the strings
}

// slowHeader is what an entry's "# " lines say.
type slowHeader struct {
	line         int64
	user         string
	schema       string
	hasSchema    bool
	queryTime    time.Duration
	rowsSent     int64
	rowsAffected int64
	errno        string
	start        time.Time
	stamp        int64 // SET timestamp, seconds; -1 when absent
}

func (p *slowParser) entry(s *stream) error {
	return s.lines.entryError(p.read(s), isSlowBoundary)
}

func (p *slowParser) read(s *stream) error {
	for {
		line, no, err := s.lines.next()
		if err != nil {
			return err
		}
		switch {
		case isServerHeader(line), len(bytes.TrimSpace(line)) == 0:
		case bytes.HasPrefix(line, []byte("# Time: ")):
			if err := p.setClock(line, no); err != nil {
				return err
			}
		case bytes.HasPrefix(line, []byte("# User@Host: ")):
			return p.readEntry(s, line, no)
		default:
			return badLine(no, line, "not a slow-log entry (expected \"# Time:\" or \"# User@Host:\")")
		}
	}
}

func (p *slowParser) setClock(line []byte, no int64) error {
	v := bytes.TrimSpace(line[len("# Time: "):])
	if t, rest, ok := isoTime(v); ok && len(rest) == 0 {
		p.clock, p.clockUS, p.fresh = t, true, true
		return nil
	}
	if t, ok := mariaTime(v); ok && len(v) == 15 {
		p.clock, p.clockUS, p.fresh = t, false, true
		return nil
	}
	return badLine(no, line, "unreadable time")
}

// isSlowBoundary reports a line that starts the next entry.
func isSlowBoundary(line []byte) bool {
	return bytes.HasPrefix(line, []byte("# Time: ")) || bytes.HasPrefix(line, []byte("# User@Host: ")) ||
		isServerHeader(line)
}

func (p *slowParser) readEntry(s *stream, first []byte, no int64) error {
	h := slowHeader{line: no, queryTime: -1, rowsSent: -1, rowsAffected: -1, stamp: -1}
	p.id = p.id[:0]
	h.user = p.userHost(first[len("# User@Host: "):])
	if err := p.readHeader(s, &h); err != nil {
		return err
	}
	if err := p.readStatement(s, &h); err != nil {
		return err
	}
	if len(p.id) == 0 {
		return badLine(h.line, []byte("# User@Host: "+h.user), "entry without a thread id (no \"Thread_id:\" or \"Id:\")")
	}
	return p.emit(s, &h)
}

// userHost reads "sbtest[sbtest] @  [198.18.1.2]  Id: 12" and returns the user.
func (p *slowParser) userHost(b []byte) string {
	if i := bytes.Index(b, []byte("Id:")); i >= 0 {
		p.id = append(p.id[:0], bytes.TrimSpace(b[i+3:])...)
	}
	if i := bytes.IndexByte(b, '['); i >= 0 {
		b = b[:i]
	}
	return intern(bytes.TrimSpace(b), &p.user)
}

// readHeader reads the entry's other "# " lines as "Key: value" pairs.
func (p *slowParser) readHeader(s *stream, h *slowHeader) error {
	for {
		line, no, ok, err := s.lines.more(isSlowBoundary)
		if err != nil {
			return err
		}
		if !ok {
			return badLine(h.line, nil, "the entry ends in its header, without a statement: it was cut short")
		}
		if !bytes.HasPrefix(line, []byte("# ")) {
			s.lines.back()
			return nil
		}
		if err := p.headerPairs(line[2:], h); err != nil {
			return badLine(no, line, err.Error())
		}
	}
}

// headerPairs reads "Key: value  Key: value" into the fields the reader keeps.
func (p *slowParser) headerPairs(b []byte, h *slowHeader) error {
	for len(b) > 0 {
		b = bytes.TrimLeft(b, " ")
		colon := bytes.Index(b, []byte(": "))
		if colon < 0 {
			return nil
		}
		key := b[:colon]
		b = b[colon+2:] // a value is one word, or none ("Schema:   QC_hit: No")
		end := bytes.IndexByte(b, ' ')
		if end < 0 {
			end = len(b)
		}
		val := b[:end]
		b = b[end:]
		if err := p.set(h, key, val); err != nil {
			return err
		}
	}
	return nil
}

func (p *slowParser) set(h *slowHeader, key, val []byte) error {
	var err error
	switch string(key) {
	case "Thread_id":
		p.id = append(p.id[:0], val...)
	case "Schema":
		h.schema, h.hasSchema = intern(val, &p.schema), true
	case "Query_time":
		h.queryTime, err = seconds(val)
	case "Rows_sent":
		h.rowsSent, err = count(val)
	case "Rows_affected":
		h.rowsAffected, err = count(val)
	case "Errno":
		if string(val) != "0" {
			h.errno = "errno " + string(val)
		}
	case "Start":
		if t, rest, ok := isoTime(val); ok && len(rest) == 0 {
			h.start = t
		}
	}
	if err != nil {
		return fmt.Errorf("unreadable %s %q", key, val)
	}
	return nil
}

// readStatement reads the "use" and "SET timestamp" lines and the statement after them.
func (p *slowParser) readStatement(s *stream, h *slowHeader) error {
	for {
		line, _, ok, err := s.lines.more(isSlowBoundary)
		if err != nil {
			return err
		}
		if !ok {
			return badLine(h.line, nil, "the entry ends before its statement: it was cut short")
		}
		if bytes.HasPrefix(line, []byte("use ")) && bytes.HasSuffix(line, []byte(";")) {
			p.useDB = unquoteIdent(line[4 : len(line)-1])
			continue
		}
		if v, ok := setTimestamp(line); ok {
			h.stamp = v
			break
		}
		s.lines.back()
		break
	}
	p.sql = p.sql[:0]
	for n := 0; ; n++ {
		line, no, ok, err := s.lines.more(isSlowBoundary)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if len(p.sql)+1+len(line) > p.max {
			return badLine(no, line, fmt.Sprintf("statement longer than %d bytes", p.max))
		}
		if n > 0 {
			p.sql = append(p.sql, '\n')
		}
		p.sql = append(p.sql, line...)
	}
	p.sql = bytes.TrimRight(p.sql, "\n")
	if !bytes.HasSuffix(p.sql, []byte(";")) {
		return badLine(h.line, p.sql, "the entry's statement has no closing ';': the entry was cut short")
	}
	p.sql = p.sql[:len(p.sql)-1]
	return nil
}

// setTimestamp reads the server's "SET timestamp=N;" line (MySQL may put last_insert_id
// and insert_id before it: "SET last_insert_id=7,insert_id=8,timestamp=N;").
func setTimestamp(line []byte) (int64, bool) {
	if !bytes.HasPrefix(line, []byte("SET ")) || !bytes.HasSuffix(line, []byte(";")) {
		return 0, false
	}
	i := bytes.Index(line, []byte("timestamp="))
	if i < 0 {
		return 0, false
	}
	v, err := count(line[i+len("timestamp=") : len(line)-1])
	return v, err == nil
}

func unquoteIdent(b []byte) string {
	if len(b) >= 2 && b[0] == '`' && b[len(b)-1] == '`' {
		return string(bytes.ReplaceAll(b[1:len(b)-1], []byte("``"), []byte("`")))
	}
	return string(b)
}

// startTime is when the entry's statement started, as well as the log tells.
func (p *slowParser) startTime(h *slowHeader) time.Time {
	fresh := p.fresh
	p.fresh = false
	switch {
	case !h.start.IsZero():
		return h.start
	case fresh && p.clockUS && h.queryTime >= 0:
		return p.clock.Add(-h.queryTime)
	case h.stamp >= 0:
		return time.Unix(h.stamp, 0).UTC()
	}
	return p.clock
}

// emit turns a read entry into events.
func (p *slowParser) emit(s *stream, h *slowHeader) error {
	db := p.useDB
	if h.hasSchema {
		db = h.schema
	}
	ev := s.event(Query, h.line, p.startTime(h))
	ev.User, ev.DB = h.user, db
	ss := s.ensure(s.key(p.id), ev)
	ev.Session = ss.id
	if db != "" && db != ss.db {
		use := s.implied(Query, ev)
		use.Session, use.Command, use.SQL = ss.id, "Init DB", useStatement(db)
		s.emit(use, nil, false)
		ss.db = db
	}
	ev.Duration, ev.Rows, ev.Err = h.queryTime, rowsOf(h), h.errno
	name, admin := bytes.CutPrefix(p.sql, []byte("# administrator command: "))
	if !admin {
		ev.SQL = string(p.sql)
		s.emit(ev, nil, false)
		return nil
	}
	kind, cname := command(name)
	switch kind {
	case cmdNoReply:
		return nil
	case cmdQuit:
		ev.Kind = Quit
		s.quit(ss, ev)
		return nil
	case cmdPrepare:
		ev.Kind = Prepare // the slow log does not show the prepared text
	case cmdInitDB:
		ev.Command, ev.SQL = cname, useStatement(db)
	default:
		if cname == "" {
			cname = string(name)
		}
		ev.Kind, ev.Command = Admin, cname
	}
	s.emit(ev, nil, false)
	return nil
}

// rowsOf is the rows the statement sent plus those it changed, where the log says.
func rowsOf(h *slowHeader) int64 {
	if h.rowsSent < 0 && h.rowsAffected < 0 {
		return -1
	}
	return max(h.rowsSent, 0) + max(h.rowsAffected, 0)
}
