// Package pgbench drives PostgreSQL's pgbench as the lab's second load driver: it builds
// the command line (initialisation and runs of the built-in select-only and TPC-B-like
// scripts), passes the password and sslmode through the libpq environment, streams the
// per-second `progress:` lines while the run is going and parses the final summary.
package pgbench
