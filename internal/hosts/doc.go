// Package hosts is the machines a study drives, behind one interface: run a command, copy
// a file, read a /proc file, start and stop a long-running process. Two backends implement
// it: the namespace lab of this machine (NS, a thin view of a lab.Lab host) and real
// machines over SSH (SSH, one connection per host with multiplexed sessions). It also
// plans the shaping of a real NIC toward one peer address only (PlanShape), reads it back
// against that plan (RemoteLink.Read), and holds the dead-man switch that removes that
// shaping on the remote host when nobody renews it.
package hosts
