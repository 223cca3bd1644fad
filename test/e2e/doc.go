// Package e2e drives the built wirelab binary as a user would, as root, against the real
// kernel, MariaDB and sysbench (PostgreSQL and pgbench for the pgbench driver): up, exec,
// iperf3 through the wire, a short run, down, and the recovery of a lab whose wirelab was
// killed with SIGKILL.
package e2e
