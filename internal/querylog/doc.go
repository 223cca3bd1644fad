// Package querylog reads a database's own query log as a stream of session events: the
// MariaDB/MySQL general log, the slow log written with long_query_time=0, and the
// PostgreSQL log in pgreplay's format (stderr with log_line_prefix '%m|%u|%d|%c|', or
// csvlog). It keeps sessions, statement order, each statement's offset from the start of
// the log and, where the log has them, its duration and rows, and it streams: memory does
// not grow with the log. It knows nothing of servers or replay (package replay).
package querylog
