package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wirelab/wirelab/internal/querylog"
)

// session replays one captured session on its own connection: its events in order, each
// statement once the previous one has finished and its think time has passed.
type session struct {
	r   *replayer
	q   *queue
	fig SessionFigures

	conn   dbConn
	m      *meter
	db     string      // the database it connects to
	unwire func() bool // stops the interrupt hook of conn
	// pending is a Connect not acted on yet: the session connects when its next event
	// shows the login did not fail in the log.
	pending *querylog.Event
	begun   bool
	// prevAt and prevDur are the last event's log offset and logged duration, prevEnd
	// the clock reading when it finished here: the next statement is due at prevEnd plus
	// the think time between them.
	prevAt, prevDur time.Duration
	prevEnd         int64
	firstConnect    int64
	lastEnd         int64
	reconnected     bool
	loginFailed     bool
	tx              txState
	timer           *time.Timer
}

func newSession(r *replayer, ev *querylog.Event) *session {
	return &session{r: r, q: newQueue(), fig: SessionFigures{Session: ev.Session, Line: ev.Line}}
}

// run replays the session's events until its queue closes, the replay stops or the
// session fails; then it counts what it did not replay and reports itself.
func (s *session) run() {
	defer s.r.wg.Done()
	for {
		ev, ok := s.q.pop(s.r.stop.Done())
		if !ok {
			break
		}
		ok = s.handle(&ev)
		s.r.budget.give(eventSize(&ev))
		if !ok {
			break
		}
	}
	s.finish()
}

// handle replays one event; false ends the session.
func (s *session) handle(ev *querylog.Event) bool {
	switch ev.Kind {
	case querylog.Connect:
		if loginFailed(ev) {
			s.loginFailed = true
			return false
		}
		if s.conn == nil && s.pending == nil && !s.begun {
			c := *ev
			s.pending = &c
		}
		return true
	case querylog.Query:
		if s.conn == nil && !s.open(ev) {
			s.fig.NotReplayed++
			return false
		}
		return s.statement(ev)
	case querylog.Quit:
		if s.conn == nil && s.pending != nil && !s.open(ev) {
			return false
		}
		s.closeConn()
		return true
	}
	return true
}

// loginFailed says whether a Connect event records a login the server refused (the
// reader sets its Err: MariaDB's "Access denied", PostgreSQL's FATAL).
func loginFailed(ev *querylog.Event) bool {
	return ev.Kind == querylog.Connect && ev.Err != ""
}

// due is when an event is due (a clock reading): the session's first at its offset in
// the log, later ones at the previous one's end plus the think time between them.
func (s *session) due(ev *querylog.Event) int64 {
	if !s.begun {
		return s.r.start + int64(s.r.o.Speed.scale(ev.At))
	}
	return s.prevEnd + int64(s.r.o.Speed.scale(ev.At-s.prevAt-s.prevDur))
}

// wait sleeps until due; false when the replay stops first.
func (s *session) wait(due int64) bool {
	stop := s.r.stop.Done()
	if d := due - s.r.clk.now(); d > 0 {
		if s.timer == nil {
			s.timer = time.NewTimer(time.Duration(d))
		} else {
			s.timer.Reset(time.Duration(d))
		}
		select {
		case <-s.timer.C:
		case <-stop:
			s.timer.Stop()
			return false
		}
	}
	select {
	case <-stop:
		return false
	default:
		return true
	}
}

// open connects at the pending Connect's time, or at next's when the log has no Connect
// line for the session (it was open before the log began).
func (s *session) open(next *querylog.Event) bool {
	c := s.pending
	if c == nil {
		c = next
	}
	s.pending = nil
	if !s.wait(s.due(c)) {
		return false
	}
	s.db = s.r.o.Target.DB
	if s.r.o.Target.LogDB && c.DB != "" {
		s.db = c.DB
	}
	if err := s.connect(s.db); err != nil {
		s.fig.Failed = err.Error()
		return false
	}
	s.begun = true
	s.prevAt, s.prevDur = c.At, 0
	return true
}

// connect opens the connection and counts what the connect cost.
func (s *session) connect(db string) error {
	t0 := s.r.clk.now()
	ctx, cancel := context.WithTimeout(s.r.ctx, connectTimeout)
	defer cancel()
	conn, m, err := s.r.srv.connect(ctx, db, s.r.clk)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	t1 := s.r.clk.now()
	w := m.counts()
	if s.r.tcp {
		w.RoundTrips++ // TCP's handshake, before the meter saw anything
	}
	s.conn, s.m, s.prevEnd = conn, m, t1
	// A replay interrupted mid-statement ends the statement by failing its reads.
	s.unwire = context.AfterFunc(s.r.ctx, func() { _ = m.SetDeadline(time.Unix(1, 0)) })
	if s.firstConnect == 0 {
		s.firstConnect = t0
	}
	s.fig.Connects++
	s.fig.ConnectRoundTrips += w.RoundTrips
	s.fig.ConnectMs += float64(t1-t0) / 1e6
	s.r.col.connected(float64(t1-t0)/1e6, w)
	return nil
}

func (s *session) closeConn() {
	if s.conn == nil {
		return
	}
	s.unwire()
	s.conn.close()
	s.conn, s.m = nil, nil
}

// statement replays one statement when it is due, and counts it.
func (s *session) statement(ev *querylog.Event) bool {
	due := s.due(ev)
	if !s.wait(due) {
		s.fig.NotReplayed++
		return false
	}
	if limit := s.r.info.MaxPacket; tooLong(len(ev.SQL), limit) {
		s.r.fail(&TooLongError{Line: ev.Line, Len: len(ev.SQL), Max: limit, Start: start(ev.SQL)})
		s.fig.NotReplayed++
		return false
	}
	class := classifyStatement(s.r.dialect, ev.SQL)
	from := s.m.mark()
	t0 := s.r.clk.now()
	rows, err := s.conn.exec(ev, class)
	t1 := s.r.clk.now()
	if s.r.ctx.Err() != nil { // interrupted: the statement was cut, not replayed
		s.fig.NotReplayed++
		return false
	}
	w, send, reply := s.m.span(from)
	if send == 0 {
		send = t0
	}
	if reply < send {
		reply = t1
	}
	s.r.col.statement(stmtRec{class: class, line: ev.Line, latMs: float64(reply-send) / 1e6, wire: w,
		rows: rows, err: err, lateMs: float64(max(0, t0-due)) / 1e6})
	s.fig.Statements++
	s.fig.RoundTrips += w.RoundTrips
	s.countTransactions(s.tx.statement(class, stmtSpan{send: send, reply: reply, waited: t0 - s.prevEnd, roundTrips: w.RoundTrips}))
	s.prevAt, s.prevDur, s.prevEnd, s.lastEnd = ev.At, max(ev.Duration, 0), t1, t1
	if err == nil {
		return true
	}
	s.fig.Errors++
	var se *serverError
	if errors.As(err, &se) {
		return true
	}
	return s.reconnect(err)
}

// reconnect replaces a connection the server dropped, once per session.
func (s *session) reconnect(lost error) bool {
	s.closeConn()
	s.countTransactions(s.tx.end()) // the server rolled it back
	if s.reconnected {
		s.fig.Failed = "connection lost a second time: " + lost.Error()
		return false
	}
	s.reconnected = true
	if err := s.connect(s.db); err != nil {
		s.fig.Failed = "reconnect after the connection was lost: " + err.Error()
		return false
	}
	return true
}

func (s *session) countTransactions(done []txnRec) {
	for _, t := range done {
		s.r.col.transaction(t)
		s.fig.Transactions++
	}
}

// finish closes the session: a Connect never followed by anything still connects (the
// log's connection churn is part of its workload), what is left in the queue is counted
// as not replayed, and the session is reported.
func (s *session) finish() {
	if s.pending != nil && s.r.stop.Err() == nil && !s.loginFailed && s.fig.Failed == "" {
		s.open(s.pending)
	}
	s.countTransactions(s.tx.end())
	s.closeConn()
	for ev, ok := s.q.pop(s.r.ctx.Done()); ok; ev, ok = s.q.pop(s.r.ctx.Done()) {
		if ev.Kind == querylog.Query {
			s.fig.NotReplayed++
		}
		s.r.budget.give(eventSize(&ev))
	}
	if s.lastEnd > 0 {
		s.fig.SessionMs = float64(s.lastEnd-s.firstConnect) / 1e6
	}
	if s.loginFailed {
		s.r.col.loginFailedInLog(LoggedSession{Session: s.fig.Session, Line: s.fig.Line}, s.fig.NotReplayed)
		return
	}
	s.r.col.sessionEnded(&s.fig, s.reconnected)
	s.r.sessions.write(&s.fig)
}

// TooLongError is a statement that does not fit in MySQL's max_allowed_packet.
type TooLongError struct {
	Line  int64
	Len   int // the statement's bytes
	Max   int // max_allowed_packet
	Start string
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("log line %d: a statement of %d bytes (%q) does not fit in the server's max_allowed_packet of %d bytes; raise max_allowed_packet on the server or leave the statement out of the log",
		e.Line, e.Len, e.Start, e.Max)
}

// tooLong says whether a statement of n bytes and its command byte exceed maxPacket (0 =
// no limit).
func tooLong(n, maxPacket int) bool { return maxPacket > 0 && n+1 > maxPacket }

// start is a statement's first 60 bytes, for messages.
func start(sql string) string {
	if len(sql) > 60 {
		return sql[:60] + "..."
	}
	return sql
}
