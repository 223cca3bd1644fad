package querylog

import (
	"fmt"
	"time"
)

// generalParser reads the MariaDB/MySQL general query log. An entry is
//
//	[time]<TAB>id command<TAB>argument
//
// where MariaDB (and MySQL before 5.7) print the time as "YYMMDD HH:MM:SS" only when the
// second changes (two tabs stand in for it otherwise), and MySQL 5.7/8.0 print an ISO
// time with microseconds on every line. A statement written over several lines goes on
// until the next line that reads as an entry, or the server's header.
//
// The log is written as commands arrive, so its order is the order the server saw them.
// Commands become events as follows: Query is a Query; Execute a Query with Command
// "Execute" (its values substituted); Prepare a Prepare; Init DB a Query "USE `db`"
// with Command "Init DB"; Connect a Connect, or the failure of the one before it when
// its argument is the server's reason ("Access denied ..."); Quit a Quit; Close stmt and
// Long Data none (the server sends no reply: no round trip); every other command Admin.
type generalParser struct {
	max int
	arg []byte // the entry's argument, copied out of the line buffer
}

// generalLine is an entry's first line taken apart; its slices point into the line.
type generalLine struct {
	t    time.Time // zero when the line has no time of its own
	id   []byte
	cmd  []byte
	arg  []byte
	name string
	kind mysqlCmd
}

// parseGeneral reads a line as a general-log entry.
func parseGeneral(line []byte) (generalLine, bool) {
	var g generalLine
	rest, ok := generalTime(line, &g.t)
	if !ok {
		return g, false
	}
	i := 0
	for i < len(rest) && rest[i] == ' ' {
		i++
	}
	j := i
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	if j == i || j >= len(rest) || rest[j] != ' ' {
		return g, false
	}
	g.id = rest[i:j]
	rest = rest[j+1:]
	tab := indexByte(rest, '\t')
	if tab < 0 {
		return g, false
	}
	g.cmd, g.arg = rest[:tab], rest[tab+1:]
	g.kind, g.name = command(g.cmd)
	return g, g.kind != cmdUnknown
}

// generalTime takes the time (or the two tabs that stand for it) off the line.
func generalTime(line []byte, t *time.Time) ([]byte, bool) {
	switch {
	case len(line) >= 2 && line[0] == '\t' && line[1] == '\t':
		return line[2:], true
	case len(line) > 15 && line[15] == '\t':
		var ok bool
		*t, ok = mariaTime(line)
		return line[16:], ok
	case len(line) > 20 && line[4] == '-' && line[10] == 'T':
		var rest []byte
		var ok bool
		*t, rest, ok = isoTime(line)
		if !ok || len(rest) == 0 || (rest[0] != '\t' && rest[0] != ' ') {
			return nil, false
		}
		for len(rest) > 0 && rest[0] == '\t' {
			rest = rest[1:]
		}
		return rest, true
	}
	return nil, false
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

func (g *generalParser) entry(s *stream) error {
	return s.lines.entryError(g.read(s), generalStarts)
}

// generalStarts reports a line that starts an entry (or the server's header).
func generalStarts(line []byte) bool { return isServerHeader(line) || isGeneral(line) }

func (g *generalParser) read(s *stream) error {
	line, no, err := s.lines.next()
	if err != nil {
		return err
	}
	if isServerHeader(line) {
		return nil
	}
	gl, ok := parseGeneral(line)
	if !ok {
		return badLine(no, line, "not a general-log entry ([time] id command<TAB>argument)")
	}
	id := s.key(gl.id) // the line buffer is reused below
	g.arg = append(g.arg[:0], gl.arg...)
	// A statement written over several lines goes on until the next entry.
	for {
		line, no, ok, err := s.lines.more(generalStarts)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if len(g.arg)+1+len(line) > g.max {
			return badLine(no, line, fmt.Sprintf("statement longer than %d bytes", g.max))
		}
		g.arg = append(append(g.arg, '\n'), line...)
	}
	return g.handle(s, gl.kind, gl.name, id, s.event(0, no, gl.t))
}

// handle turns one entry into events.
func (g *generalParser) handle(s *stream, kind mysqlCmd, name string, id string, ev Event) error {
	ss := s.open[id]
	if kind == cmdConnect {
		return g.connect(s, ss, id, ev)
	}
	if ss != nil {
		s.release(ss)
	}
	switch kind {
	case cmdNoReply:
		return nil
	case cmdQuit:
		if ss == nil {
			ss = s.ensure(id, ev)
		}
		ev.Kind = Quit
		s.quit(ss, ev)
		return nil
	}
	if ss == nil {
		ss = s.ensure(id, ev)
	}
	ev.Session, ev.Command = ss.id, name
	switch kind {
	case cmdQuery, cmdExecute:
		ev.Kind, ev.SQL = Query, string(g.arg)
	case cmdPrepare:
		ev.Kind, ev.SQL = Prepare, string(g.arg)
	case cmdInitDB:
		ss.db = string(g.arg)
		ev.Kind, ev.SQL, ev.DB = Query, useStatement(ss.db), ss.db
	default:
		ev.Kind, ev.SQL = Admin, string(g.arg)
	}
	s.emit(ev, ss, false)
	return nil
}

// connect handles a Connect line: a login, or the reason the one before it failed.
// The Connect is held until the session's next line, which may be that reason.
func (g *generalParser) connect(s *stream, ss *session, id string, ev Event) error {
	ev.Kind = Connect
	user, db, ok := connectArg(g.arg)
	if ok {
		ev.User, ev.DB = user, db
		s.connect(id, ev, true)
		return nil
	}
	ev.Err = string(g.arg)
	if ss != nil {
		if held := s.heldEvent(ss); held != nil && held.Kind == Connect {
			held.Err = ev.Err
			s.drop(ss)
			return nil
		}
		s.release(ss)
	}
	// A failure whose login line was let go already, or is not in the log: the
	// failed Connect stands alone, and the session is not open.
	ev.Session = id
	s.emit(ev, nil, false)
	return nil
}
