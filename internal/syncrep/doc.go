// Package syncrep is the synchronous-replication study: what a replica whose
// acknowledgement a commit waits for costs every commit, across a shaped wire. The
// primary and its replica are the replication study's Pair (package replication builds,
// starts and verifies them); the load driver runs beside the primary, unshaped, as an
// application in the same data centre; the wire is between the primary and the replica.
// What is compared is a Mode (one file per family: async.go, semisync.go, pgcommit.go;
// the registry in mode.go), swept over RTT × threads, and the findings are the commit's
// price in round trips and what a mode keeps of the control's throughput.
package syncrep
