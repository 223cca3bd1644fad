// Package replay plays a captured query log (a querylog.Reader) against a MariaDB/MySQL
// or PostgreSQL server: one connection per captured session, statements in order, think
// time as recorded and scaled by a speed, from a child process (`wirelab __replay`) that
// runs on the lab's client host. It measures what the wire carries from the protocol
// itself (bytes each way and round trips per statement, transaction and connect, below
// TLS) and prints per-second ticks and a Summary that Run decodes; Scan checks a log
// before anything is built.
package replay
