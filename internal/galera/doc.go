// Package galera runs a two-node MariaDB Galera cluster (galera-4) across the lab's shaped
// wire: one node in the server host, one in the replica host, their group communication
// (gcomm) between the two hosts' lab addresses, so every commit waits one round trip of
// the shaped link for certification. Start bootstraps the first node and joins the second
// from a copy of its datadir (a few write sets of incremental transfer, no full state
// transfer across the wire); Begin and Stats read the flow-control and queue figures of a
// measurement window; Verify compares the bench tables on both nodes; Close stops both and
// removes their datadirs (call it before the lab's Down). The nodes are ordinary lab
// servers (lab.StartServer), so a lab torn down after a kill -9 (`wirelab down`) removes
// them like any other.
package galera
