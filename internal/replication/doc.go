// Package replication is the weak-network replication study (DTLE 2021): a source in the
// server host, a replica behind the wire, and the channels between them (native, native
// with MariaDB's compressed protocol, wirelab's tunnel), on MariaDB (GTID binlog
// replication) or PostgreSQL (physical streaming replication). Lag is measured with a
// heartbeat row written on the source every 100 ms and read on the replica every 100 ms
// (one machine, one clock), checksums prove the replica equals the source after every
// point, and the scenario runners (lag vs RTT, max sustainable load, bandwidth used) turn
// that into result.Points for the report's replication section. What differs between
// engines is a Replicator (one file per engine) and a heartbeat Dialect.
package replication
