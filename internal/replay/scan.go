package replay

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/wirelab/wirelab/internal/querylog"
)

// ScanResult is what a whole log holds, read once before a replay is set up.
type ScanResult struct {
	// Sessions will be replayed: every session of the log but those whose login failed.
	Sessions int64
	// WithoutConnect are sessions with statements but no Connect line (open before the
	// log began); they are replayed.
	WithoutConnect int64
	Statements     int64
	// Span runs from the log's first entry to its last; First and Last are their clock
	// times where the log has them.
	Span        time.Duration
	First, Last time.Time
	Lines       int64 // the last line read
	// Longest is the longest statement.
	Longest LongStatement
	// NeverConnected are the sessions whose login failed when captured (the first 100),
	// NeverConnectedCount all of them: none is replayed.
	NeverConnected      []LoggedSession
	NeverConnectedCount int64
	// BadLines were skipped by a reader opened to skip them.
	BadLines int64
}

// LongStatement is a statement's size and where it is.
type LongStatement struct {
	Line  int64
	Len   int
	Start string
}

// scanSession is what Scan keeps of a session until its Quit.
type scanSession struct {
	line      int64
	connected bool
	queries   bool
}

// Scan reads the whole log once, as a stream (it keeps only the sessions that are open),
// and says what it holds: the CLI's check before anything is created. A line the reader
// cannot read is the error, with its line number, unless the reader skips such lines
// (then BadLines counts them).
func Scan(ctx context.Context, rd querylog.Reader) (*ScanResult, error) {
	res := &ScanResult{}
	open := map[string]*scanSession{}
	var n int64
	for ; ; n++ {
		if n%65536 == 0 && ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read the log: %w", err)
		}
		res.event(&ev, open)
	}
	for _, s := range open {
		res.ended(s)
	}
	res.BadLines = skipped(rd)
	return res, nil
}

// event adds one event to the result.
func (r *ScanResult) event(ev *querylog.Event, open map[string]*scanSession) {
	r.Lines = ev.Line
	r.Span = max(r.Span, ev.At)
	if !ev.Time.IsZero() {
		if r.First.IsZero() {
			r.First = ev.Time
		}
		r.Last = ev.Time
	}
	s := open[ev.Session]
	if s == nil {
		s = &scanSession{line: ev.Line}
		open[ev.Session] = s
	}
	switch ev.Kind {
	case querylog.Connect:
		if loginFailed(ev) {
			r.NeverConnectedCount++
			if len(r.NeverConnected) < 100 {
				r.NeverConnected = append(r.NeverConnected, LoggedSession{Session: ev.Session, Line: s.line})
			}
			delete(open, ev.Session)
			return
		}
		s.connected = !ev.Implied
	case querylog.Query:
		r.Statements++
		s.queries = true
		if len(ev.SQL) > r.Longest.Len {
			r.Longest = LongStatement{Line: ev.Line, Len: len(ev.SQL), Start: start(ev.SQL)}
		}
	case querylog.Quit:
		r.ended(s)
		delete(open, ev.Session)
	}
}

func (r *ScanResult) ended(s *scanSession) {
	r.Sessions++
	if !s.connected && s.queries {
		r.WithoutConnect++
	}
}

// CheckMaxPacket refuses a log whose longest statement does not fit in a MySQL server's
// max_allowed_packet (a statement travels with one command byte), naming its line.
func (r *ScanResult) CheckMaxPacket(maxPacket int) error {
	if tooLong(r.Longest.Len, maxPacket) {
		return &TooLongError{Line: r.Longest.Line, Len: r.Longest.Len, Max: maxPacket, Start: r.Longest.Start}
	}
	return nil
}
