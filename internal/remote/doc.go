// Package remote is a study's database server and processes on a host reached through
// hosts.Host: wirelab copies its own binary there and starts `wirelab agent mariadb` or
// `wirelab agent postgres` (an Engine each: mariadb.go, postgres.go), which runs the server
// and reports how to reach it in a state file. What it returns is an engine.Server, so the
// study engine uses a remote server as it uses the lab's.
package remote
