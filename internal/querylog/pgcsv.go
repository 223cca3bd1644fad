package querylog

import (
	"bytes"
	"fmt"
)

// pgCSVParser reads PostgreSQL's csvlog (log_destination = 'csvlog', with
// log_statement = all, log_connections and log_disconnections): one CSV record per
// entry, fields in double quotes where they hold commas, quotes ("" for one) or
// newlines, so a record may span lines. The columns used are the same in every version
// since 9.0: log_time, user_name, database_name, session_id, error_severity, message,
// detail and query (0, 1, 2, 5, 11, 13, 14, 19); later versions add columns at the end.
type pgCSVParser struct {
	pg   pgState
	e    pgEntry
	rec  []byte // the record's fields, unquoted, one after another
	ends []int  // where each field ends in rec
}

// csvMinFields is how many columns a record needs: up to the message's detail.
const csvMinFields = 15

func (p *pgCSVParser) field(i int) []byte {
	if i >= len(p.ends) {
		return nil
	}
	start := 0
	if i > 0 {
		start = p.ends[i-1]
	}
	return p.rec[start:p.ends[i]]
}

func (p *pgCSVParser) entry(s *stream) error {
	return s.lines.entryError(p.read(s), pgCSVStarts)
}

// pgCSVStarts reports a line that starts a record: a log_time and a comma. It is used
// only to find the next record after a bad one.
func pgCSVStarts(line []byte) bool {
	_, rest, ok := pgTime(line)
	return ok && len(rest) > 0 && rest[0] == ','
}

func inRecord([]byte) bool { return false }

func (p *pgCSVParser) read(s *stream) error {
	first, err := p.record(s)
	if err != nil {
		return err
	}
	if len(p.ends) < csvMinFields {
		return badLine(first, p.rec, fmt.Sprintf("CSV record with %d fields: a csvlog record has at least %d", len(p.ends), csvMinFields))
	}
	t, rest, ok := pgTime(p.field(0))
	if !ok || len(rest) != 0 {
		return badLine(first, p.field(0), "unreadable log_time")
	}
	p.e = pgEntry{line: first, t: t, level: level(p.field(11)), sid: s.key(p.field(5)),
		user: intern(p.field(1), &p.pg.user), db: intern(p.field(2), &p.pg.db),
		msg: p.field(13), detail: p.field(14)}
	if len(p.ends) > 19 {
		p.e.query = p.field(19)
	}
	return p.pg.handle(s, &p.e)
}

// record reads one CSV record into rec and ends, and returns the line it starts on.
func (p *pgCSVParser) record(s *stream) (int64, error) {
	p.rec, p.ends = p.rec[:0], p.ends[:0]
	line, first, err := s.lines.next()
	if err != nil {
		return 0, err
	}
	quoted, start := false, true
	for {
		for i := 0; i < len(line); {
			switch {
			case start && line[i] == '"':
				quoted, start = true, false
				i++
			case quoted:
				j := bytes.IndexByte(line[i:], '"')
				if j < 0 {
					p.rec, i = append(p.rec, line[i:]...), len(line)
					break
				}
				p.rec, i = append(p.rec, line[i:i+j]...), i+j+1
				if i < len(line) && line[i] == '"' { // "" is a quote
					p.rec, i = append(p.rec, '"'), i+1
				} else {
					quoted = false
				}
			default:
				j := bytes.IndexByte(line[i:], ',')
				if j < 0 {
					p.rec, i, start = append(p.rec, line[i:]...), len(line), false
					break
				}
				p.rec, i, start = append(p.rec, line[i:i+j]...), i+j+1, true
				p.ends = append(p.ends, len(p.rec))
			}
		}
		if !quoted {
			p.ends = append(p.ends, len(p.rec))
			return first, nil
		}
		// A newline inside quotes belongs to the field.
		var no int64
		var ok bool
		line, no, ok, err = s.lines.more(inRecord)
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, badLine(first, p.rec, "the log ends inside a quoted field: the record was cut short")
		}
		if len(p.rec)+len(line) > p.pg.max {
			return 0, badLine(no, line, fmt.Sprintf("record longer than %d bytes", p.pg.max))
		}
		p.rec = append(p.rec, '\n')
	}
}
