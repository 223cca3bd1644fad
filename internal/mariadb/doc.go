// Package mariadb runs one MariaDB server for the lab: it creates the datadir, writes a
// my.cnf tuned for benchmarks over a shaped network, generates TLS certificates with
// crypto/x509, starts mariadbd inside a host's network namespace, creates the bench user
// and stops the server again. It also has the few replication helpers the replication
// study needs (CHANGE MASTER with GTID, START/STOP SLAVE, GTID positions).
package mariadb
