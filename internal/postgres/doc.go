// Package postgres runs one PostgreSQL server for the lab, the counterpart of package
// mariadb: it initialises a datadir under a directory the caller owns, writes its own
// postgresql.conf and pg_hba.conf (nothing from /etc/postgresql is read), generates TLS
// certificates with internal/pki, starts the postmaster as the unprivileged OS user
// "postgres" inside a host's network namespace, creates the bench user and database,
// describes how clients connect (libpq environment), and stops the server again.
package postgres
