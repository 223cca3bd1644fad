// Package engine is what wirelab needs from a database server, whatever its kind: where
// clients connect (Conn), which processes are its CPU (Pids), what the report says of it
// (Facts), the environment `wirelab exec` hands to clients (Env), and how to stop it. Two
// kinds start in the lab — MariaDB and PostgreSQL — behind the one Server interface; an
// external server (a DSN the user gives) is a Server wirelab did not start and cannot
// sample. The study engine and the clients (sysbench, pgbench) see only this package.
package engine
