package querylog

import (
	"bytes"
	"fmt"
	"time"
)

// pgStderrParser reads PostgreSQL's stderr log written with pgreplay's settings:
//
//	log_line_prefix = '%m|%u|%d|%c|'   log_statement = all
//	log_connections = on               log_disconnections = on
//
//	2026-12-08 00:12:15.321 UTC|sbtest|sbtest|6b174b5f.192c|LOG:  statement: select
//		  aid, abalance
//
// An entry is a prefixed line and the lines after it that start with a tab: the server
// writes a message's newlines as a newline and a tab, which the reader takes off again,
// as pgreplay does. Messages must be in English (lc_messages), as pgreplay needs.
type pgStderrParser struct {
	pg  pgState
	e   pgEntry
	msg []byte
}

// pgPrefix is a line's prefix taken apart; its slices point into the line.
type pgPrefix struct {
	t             time.Time
	user, db, sid []byte
	level         []byte
	msg           []byte
}

// parsePGPrefix reads "%m|%u|%d|%c|LEVEL:  message".
func parsePGPrefix(line []byte) (pgPrefix, bool) {
	var p pgPrefix
	t, rest, ok := pgTime(line)
	if !ok || len(rest) == 0 || rest[0] != '|' {
		return p, false
	}
	p.t = t
	fields := [3]*[]byte{&p.user, &p.db, &p.sid}
	rest = rest[1:]
	for _, f := range fields {
		i := bytes.IndexByte(rest, '|')
		if i < 0 {
			return p, false
		}
		*f, rest = rest[:i], rest[i+1:]
	}
	i := bytes.Index(rest, []byte(":  "))
	if i <= 0 || len(p.sid) == 0 {
		return p, false
	}
	for _, c := range rest[:i] {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return p, false
		}
	}
	p.level, p.msg = rest[:i], rest[i+3:]
	return p, true
}

func (p *pgStderrParser) entry(s *stream) error {
	return s.lines.entryError(p.read(s), pgStderrStarts)
}

// pgStderrStarts reports a line that is not a message's continuation.
func pgStderrStarts(line []byte) bool { return len(line) == 0 || line[0] != '\t' }

func (p *pgStderrParser) read(s *stream) error {
	line, no, err := s.lines.next()
	if err != nil {
		return err
	}
	pf, ok := parsePGPrefix(line)
	if !ok {
		return badLine(no, line, "not a line of pgreplay's format (log_line_prefix '%m|%u|%d|%c|', then \"LEVEL:  message\")")
	}
	p.e = pgEntry{line: no, t: pf.t, level: level(pf.level), sid: s.key(pf.sid),
		user: intern(pf.user, &p.pg.user), db: intern(pf.db, &p.pg.db)}
	p.msg = append(p.msg[:0], pf.msg...)
	for {
		line, no, ok, err := s.lines.more(pgStderrStarts)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if len(p.msg)+len(line) > p.pg.max {
			return badLine(no, line, fmt.Sprintf("entry longer than %d bytes", p.pg.max))
		}
		p.msg = append(append(p.msg, '\n'), line[1:]...)
	}
	p.e.msg = p.msg
	return p.pg.handle(s, &p.e)
}
