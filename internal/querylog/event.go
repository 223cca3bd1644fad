package querylog

import (
	"fmt"
	"time"
)

// Kind is what an Event records of its session.
type Kind uint8

const (
	// Connect opens a session (a log without connection lines, the slow log, opens one
	// at its first statement).
	Connect Kind = iota + 1
	// Query is one statement the session sent and waited for.
	Query
	// Quit closes a session (a log without it closes each session after its last
	// statement).
	Quit
	// Prepare is a statement the session prepared for later executions: a round trip of
	// its own on the wire (MariaDB's COM_STMT_PREPARE, PostgreSQL's named Parse where the
	// log shows it). SQL is the text with its placeholders; the executions come as Query
	// events with Command "Execute". A replayer that sends text statements skips it or
	// counts its round trip, as it chooses.
	Prepare
	// Admin is a protocol command that carries no statement (MariaDB's Ping, Field List,
	// Statistics, Change user, Reset connection, ...; PostgreSQL's fastpath "Function
	// call"): a round trip of its own. Command names it; SQL is the log's argument, for
	// information only, never a statement.
	Admin
)

// String names the kind as logs do.
func (k Kind) String() string {
	switch k {
	case Connect:
		return "connect"
	case Query:
		return "query"
	case Quit:
		return "quit"
	case Prepare:
		return "prepare"
	case Admin:
		return "admin"
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Event is one entry of a query log: a session connecting, sending a statement, or
// quitting. Events come in the log's order, which is the order the server saw them.
type Event struct {
	// Line is the log line the entry starts on (1-based), for error messages.
	Line int64
	// Session names the session within the log: MariaDB's thread id, PostgreSQL's
	// session id (%c).
	Session string
	Kind    Kind
	// At is the entry's time since the log's first entry; Time the entry's own clock
	// time, zero when the log has none for it (then At is the last known one).
	At   time.Duration
	Time time.Time
	// SQL is the statement as the session sent it (Query only).
	SQL string
	// Params are the values of $1..$n of a statement sent through PostgreSQL's extended
	// protocol, as the log prints them (text; Null[i] marks a NULL); nil for a statement
	// sent as text.
	Params []string
	Null   []bool
	// Duration is how long the server took for the statement, where the log says it
	// (the slow log's Query_time); -1 when unknown.
	Duration time.Duration
	// Rows is the rows the statement sent or changed, where the log says it; -1 when
	// unknown.
	Rows int64
	// User and DB are the session's user and database where the log names them (Connect,
	// and every entry of logs that carry them per line).
	User, DB string

	// Command is the protocol command where the entry is not a plain text statement:
	// "Execute" for a statement executed through MariaDB's binary protocol (SQL has the
	// values substituted) or PostgreSQL's extended protocol (SQL has $n, Params the
	// values); "Init DB" for MariaDB's change of database (SQL is the equivalent USE);
	// the command's name for Admin. Empty for a statement sent as text.
	Command string
	// Stmt is the name of the PostgreSQL prepared statement a Query executes or a Prepare
	// makes ("" for the unnamed one, and for MariaDB, whose log names none). A replayer
	// prepares a named statement before its first execution, as pgreplay does: the log
	// does not show when it was prepared.
	Stmt string
	// Err is the error the server gave the entry when it was recorded, where the log says
	// it: a failed login on a Connect (the session never connected; nothing else of it
	// follows), a PostgreSQL ERROR on the statement it ended, MySQL's slow-log Errno.
	Err string
	// Implied marks an event no line of the log shows, made by the reader so that every
	// session opens and closes: the Connect of a session first seen at a statement (the
	// slow log has no connection lines; a general log may start mid-session), the Quit of
	// one still open at the end of the log or whose id connects again, and the change of
	// database ("Init DB") that a slow log only shows as a new Schema. Line and At are
	// those of the entry that implied it (for the Quits at the end of the log, its last
	// line and the last offset); Time is zero.
	Implied bool
}

// Format is a query log's layout.
type Format string

// The formats Open reads.
const (
	MySQLGeneral Format = "mysql-general"
	MySQLSlow    Format = "mysql-slow"
	PGStderr     Format = "pg-stderr"
	PGCSV        Format = "pg-csv"
)

// Formats are the formats Open reads, in the order the flag lists them.
var Formats = []Format{MySQLGeneral, MySQLSlow, PGStderr, PGCSV}

// Reader is a stream of a log's events. Next returns io.EOF after the last one; a
// malformed entry is a *BadLineError unless the reader skips such entries.
type Reader interface {
	Next() (Event, error)
}

// BadLineError is a log line the reader cannot read as its format.
type BadLineError struct {
	Line int64
	Text string // the line, cut to 200 bytes
	Why  string
}

func (e *BadLineError) Error() string {
	return fmt.Sprintf("line %d: %s: %q", e.Line, e.Why, e.Text)
}
