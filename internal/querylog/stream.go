package querylog

import (
	"io"
	"sort"
	"time"
)

// holdLimit bounds how many events may wait behind one that is held for a later line of
// its session (a PostgreSQL statement waiting for its parameters, error or duration; a
// MariaDB Connect waiting for "Access denied"). Past it the oldest is let go as it is,
// so memory stays bounded when a session goes quiet with a statement held.
const holdLimit = 4096

// parser reads one entry of its format and hands the events it makes to the stream.
// It returns io.EOF at the end of the log, a *BadLineError for an entry it cannot
// read (the entry is dropped whole).
type parser interface {
	entry(s *stream) error
}

// session is what the stream keeps of a session between its entries: a few words, so
// open sessions, not the log's length, bound the memory.
type session struct {
	id       string
	order    int64 // when it was first seen, to close the sessions left at the end in order
	held     int64 // sequence number of its event still held, or -1
	user, db string
	lastSQL  string // PostgreSQL: the last statement, to tell its ERROR from another's
	orphan   string // PostgreSQL: an ERROR no logged statement took, for the STATEMENT line after it
}

type pending struct {
	ev   Event
	held bool
}

// stream turns a parser's entries into the ordered event stream: it keeps the open
// sessions, makes the implied Connect and Quit events, holds an event while a later
// line may still add to it, and counts or returns bad lines.
type stream struct {
	lines   *lineReader
	p       parser
	skip    bool
	skipped int64
	err     error // returned once the queue is drained
	done    bool

	q     []pending
	qHead int
	qBase int64 // sequence number of q[0]

	open   map[string]*session
	nextID int64

	origin    time.Time
	hasOrigin bool
	lastAt    time.Duration
}

func newStream(lines *lineReader, p parser, skip bool) *stream {
	return &stream{lines: lines, p: p, skip: skip, open: make(map[string]*session)}
}

// Next returns the log's next event, io.EOF after the last one.
func (s *stream) Next() (Event, error) {
	for {
		if ev, ok := s.pop(); ok {
			return ev, nil
		}
		if s.done {
			return Event{}, s.err
		}
		err := s.p.entry(s)
		switch {
		case err == nil:
		case err == io.EOF:
			s.finish()
			s.done, s.err = true, io.EOF
		case s.skip && isBad(err):
			s.skipped++
		default:
			s.done, s.err = true, err
		}
	}
}

func (s *stream) pop() (Event, bool) {
	if s.qHead == len(s.q) {
		s.qBase += int64(len(s.q))
		s.q, s.qHead = s.q[:0], 0
		return Event{}, false
	}
	p := &s.q[s.qHead]
	if p.held && !s.done && len(s.q)-s.qHead <= holdLimit {
		return Event{}, false
	}
	ev := p.ev
	*p = pending{}
	s.qHead++
	if s.qHead >= 1024 && s.qHead*2 >= len(s.q) {
		n := copy(s.q, s.q[s.qHead:])
		clear(s.q[n:])
		s.q = s.q[:n]
		s.qBase += int64(s.qHead)
		s.qHead = 0
	}
	return ev, true
}

// emit queues an event; held keeps it back until release (or the hold limit).
func (s *stream) emit(ev Event, ss *session, held bool) {
	s.q = append(s.q, pending{ev: ev, held: held})
	if held && ss != nil {
		ss.held = s.qBase + int64(len(s.q)) - 1
	}
}

// heldEvent is the session's event still in the queue and held, or nil. The pointer is
// good until the next emit.
func (s *stream) heldEvent(ss *session) *Event {
	i := ss.held - s.qBase
	if ss.held < 0 || i < int64(s.qHead) || i >= int64(len(s.q)) || !s.q[i].held {
		return nil
	}
	return &s.q[i].ev
}

// release lets the session's held event go.
func (s *stream) release(ss *session) {
	if i := ss.held - s.qBase; ss.held >= 0 && i >= int64(s.qHead) && i < int64(len(s.q)) {
		s.q[i].held = false
	}
	ss.held = -1
}

// lookup returns the open session with this id, or nil.
func (s *stream) lookup(id []byte) *session { return s.open[string(id)] }

// key returns the id as a string, the open session's own when there is one, so that
// the events of a session share one string.
func (s *stream) key(id []byte) string {
	if ss := s.open[string(id)]; ss != nil {
		return ss.id
	}
	return string(id)
}

// connect opens a session for a Connect line. A session already open with the same id
// is closed first (an implied Quit): the server restarted and reused the id, or its Quit
// was not logged.
func (s *stream) connect(id string, ev Event, held bool) *session {
	if old := s.open[id]; old != nil {
		s.closeImplied(old, ev)
	}
	ss := s.newSession(id)
	ss.user, ss.db = ev.User, ev.DB
	ev.Session = ss.id
	s.emit(ev, ss, held)
	return ss
}

// ensure returns the open session with this id, opening it with an implied Connect
// when the log shows none (at is the entry that implies it).
func (s *stream) ensure(id string, at Event) *session {
	if ss := s.open[id]; ss != nil {
		return ss
	}
	ss := s.newSession(id)
	ss.user, ss.db = at.User, at.DB
	c := s.implied(Connect, at)
	c.Session = ss.id
	s.emit(c, nil, false)
	return ss
}

func (s *stream) newSession(id string) *session {
	ss := &session{id: id, order: s.nextID, held: -1}
	s.nextID++
	s.open[ss.id] = ss
	return ss
}

// quit closes the session with ev (a Quit, logged or implied).
func (s *stream) quit(ss *session, ev Event) {
	s.release(ss)
	ev.Session = ss.id
	s.emit(ev, nil, false)
	delete(s.open, ss.id)
}

// drop forgets a session without a Quit: its login failed, so it never connected.
func (s *stream) drop(ss *session) {
	s.release(ss)
	delete(s.open, ss.id)
}

// intern returns b as a string, the previous one when it is the same, so that the
// events of a session share one.
func intern(b []byte, prev *string) string {
	if string(b) != *prev {
		*prev = string(b)
	}
	return *prev
}

// implied makes an event no line shows, placed at the entry that implies it.
func (s *stream) implied(k Kind, at Event) Event {
	return Event{Line: at.Line, Kind: k, At: at.At, Duration: -1, Rows: -1,
		User: at.User, DB: at.DB, Implied: true}
}

// finish closes every session still open at the end of the log, in the order they were
// first seen, at the time of the last entry.
func (s *stream) finish() {
	left := make([]*session, 0, len(s.open))
	for _, ss := range s.open {
		left = append(left, ss)
	}
	sort.Slice(left, func(i, j int) bool { return left[i].order < left[j].order })
	end := Event{Line: s.lines.lastNo, At: s.lastAt}
	for _, ss := range left {
		s.closeImplied(ss, end)
	}
}

// closeImplied closes a session the log shows no Quit for, at the entry at.
func (s *stream) closeImplied(ss *session, at Event) {
	ev := s.implied(Quit, at)
	ev.User, ev.DB = ss.user, ss.db
	s.quit(ss, ev)
}

// at turns an entry's clock time into its offset from the log's first entry; an entry
// without a time of its own gets the last one known.
func (s *stream) at(t time.Time) time.Duration {
	if t.IsZero() {
		return s.lastAt
	}
	if !s.hasOrigin {
		s.origin, s.hasOrigin = t, true
	}
	s.lastAt = t.Sub(s.origin)
	return s.lastAt
}

// event starts an event of kind k at line no and clock time t.
func (s *stream) event(k Kind, no int64, t time.Time) Event {
	return Event{Line: no, Kind: k, At: s.at(t), Time: t, Duration: -1, Rows: -1}
}
