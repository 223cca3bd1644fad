// Package querylog reads a database's own query log as a stream of session events: the
// MariaDB/MySQL general log, the slow log written with long_query_time=0, and the
// PostgreSQL log in pgreplay's format (stderr with log_line_prefix '%m|%u|%d|%c|', or
// csvlog). It keeps sessions, statement order, each statement's offset from the start of
// the log and, where the log has them, its duration and rows, and it streams: memory does
// not grow with the log. It knows nothing of servers or replay (package replay).
//
// Open sniffs or takes the format and returns a Log, a Reader of Events. What each
// format gives:
//
//   - mysql-general: every command in the order the server received it, Connect and
//     Quit included; prepared statements as Prepare and Execute (values substituted).
//     MariaDB prints whole seconds, so offsets are in whole seconds; MySQL 5.7+ prints
//     microseconds. No durations, rows or errors (but a failed login).
//   - mysql-slow: every statement with its duration and rows, in the order statements
//     finished (a session's are in order, offsets of different sessions need not rise);
//     offsets from the statement's start (microseconds on MySQL, seconds on MariaDB). No
//     connection lines: sessions open and close by implication (Event.Implied).
//   - pg-stderr, pg-csv: what pgreplay reads (statements, executions with their
//     parameters, connections, disconnections) with millisecond offsets, plus each
//     statement's ERROR, its duration where logged, and failed logins.
//
// Every session opens with a Connect and closes with a Quit, logged or implied, except a
// login that failed: a Connect with Err and nothing after it. A bad line stops the
// reader with a *BadLineError naming it, or (Options.SkipBadLines) is skipped with the
// entry it is in and counted.
//
// Classify and Fingerprint read a statement's class (and whether it opens or ends a
// transaction) and its shape with its values stripped, with a hand-written lexer that
// knows each Dialect's quotes and comments.
package querylog
