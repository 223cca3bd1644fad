// Package replication is the weak-network replication study (DTLE 2021): a
// source MariaDB in the server host, a replica behind the wire, and three channels
// between them (native, native with the compressed protocol, wirelab's tunnel). Lag is
// measured with a heartbeat row written on the source every 100 ms and read on the
// replica every 100 ms (one machine, one clock), checksums prove the replica equals the
// source after every point, and the scenario runners (lag vs RTT, max sustainable load,
// bandwidth used) turn that into result.Points for the report's replication section.
package replication
