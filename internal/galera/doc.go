// Package galera runs a two-node MariaDB Galera cluster (galera-4) across the lab's shaped
// wire: one node in the server host, one in the replica host, their group communication
// (gcomm) between the two hosts' lab addresses, so every commit waits one round trip of
// the shaped link for certification. Start bootstraps the first node and joins the second
// (rsync state transfer); Stats reads the flow-control and queue figures of a
// measurement window; Verify compares the bench tables on both nodes; Close stops both and
// removes their datadirs. The nodes are ordinary lab servers (lab.StartServer), so a lab
// torn down after a kill -9 (`wirelab down`) removes them like any other.
package galera
