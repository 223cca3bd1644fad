// Package sysbench drives sysbench 1.0.20 against the lab's MariaDB (mysql driver) or
// PostgreSQL (pgsql driver): it builds the command line and environment, runs
// prepare/run/cleanup (optionally inside a network namespace), streams the per-second
// report lines to a callback while the run is going, and parses the final summary by its
// labels.
package sysbench
