package querylog

import (
	"bytes"
	"strings"
)

// What the MariaDB/MySQL general and slow logs share: the header the server writes when
// it opens the file, the names of the protocol commands, and the Connect argument.

// isServerHeader reports a line of the three the server writes at the top of a general
// or slow log file, and again each time it reopens it (a restart, FLUSH LOGS):
//
//	/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1 (Debian 12). started with:
//	Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock
//	Time		    Id Command	Argument
func isServerHeader(line []byte) bool {
	switch {
	case bytes.HasSuffix(line, []byte("started with:")) && bytes.Contains(line, []byte(", Version: ")):
		return true
	case bytes.HasPrefix(line, []byte("Tcp port: ")):
		return true
	case bytes.HasPrefix(line, []byte("Time")) && bytes.Contains(line, []byte("Id Command")) &&
		bytes.HasSuffix(bytes.TrimRight(line, " \t"), []byte("Argument")):
		return true
	}
	return false
}

// mysqlCmd is what the reader makes of a protocol command the log names.
type mysqlCmd uint8

const (
	cmdUnknown mysqlCmd = iota
	cmdQuery            // a text statement
	cmdExecute          // a prepared statement's execution (values substituted)
	cmdPrepare
	cmdConnect
	cmdQuit
	cmdInitDB
	cmdNoReply // a command the server does not answer: no round trip, no event
	cmdAdmin   // any other command: a round trip without a statement
)

// command looks up a command name as the logs print it (MariaDB and MySQL spell a few
// differently) and returns the name the event carries.
func command(name []byte) (mysqlCmd, string) {
	switch string(name) {
	case "Query":
		return cmdQuery, ""
	case "Execute":
		return cmdExecute, "Execute"
	case "Prepare":
		return cmdPrepare, ""
	case "Connect":
		return cmdConnect, ""
	case "Quit":
		return cmdQuit, ""
	case "Init DB":
		return cmdInitDB, "Init DB"
	case "Close stmt":
		return cmdNoReply, "Close stmt"
	case "Long Data":
		return cmdNoReply, "Long Data"
	}
	if n, ok := adminCommands[string(name)]; ok {
		return cmdAdmin, n
	}
	return cmdUnknown, ""
}

// adminCommands are the other commands of MariaDB's and MySQL's command tables.
var adminCommands = func() map[string]string {
	m := make(map[string]string)
	for _, n := range []string{
		"Sleep", "Field List", "Create DB", "Drop DB", "Refresh", "Shutdown", "Statistics",
		"Processlist", "Connect Out", "Kill", "Debug", "Ping", "Time", "Delayed insert",
		"Change user", "Binlog Dump", "Table Dump", "Register Slave", "Reset stmt",
		"Set option", "Fetch", "Daemon", "Binlog Dump GTID", "Reset connection",
		"Reset Connection", "Error", "Bulk_execute", "Slave_worker", "Slave_IO", "Slave_SQL",
		"Com_multi", "Clone", "Group Replication Data Stream", "Unimplemented",
	} {
		m[n] = n
	}
	return m
}()

// connectArg reads a Connect line's argument, "sbtest@198.18.1.2 on sbtest using
// TCP/IP" (the database empty when none was named). Anything else on a Connect line is
// the server's reason the login failed ("Access denied for user ..."): ok is false.
func connectArg(arg []byte) (user, db string, ok bool) {
	at := bytes.IndexByte(arg, '@')
	if at < 0 || bytes.ContainsAny(arg[:at], " \t'") {
		return "", "", false
	}
	rest := arg[at:]
	on := bytes.Index(rest, []byte(" on "))
	if on < 0 {
		return string(arg[:at]), "", true
	}
	rest = rest[on+4:]
	if u := bytes.Index(rest, []byte(" using ")); u >= 0 {
		rest = rest[:u]
	}
	return string(arg[:at]), strings.TrimSpace(string(rest)), true
}

// useStatement is the text statement that does what MariaDB's Init DB command does.
func useStatement(db string) string {
	return "USE `" + strings.ReplaceAll(db, "`", "``") + "`"
}
