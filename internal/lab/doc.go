// Package lab builds and removes the lab: network namespaces for the client, wire, server
// (and replica) hosts, veth pairs through the wire host, addresses from 198.18.0.0/15, a
// cgroup that every long-running process of the lab starts in, and a state file under
// /run/wirelab so `wirelab down` can remove a lab after a kill -9. A lab measuring an
// existing server routes its server host to it through a veth into this machine's own
// namespace (outside.go); the state records every change made there, and Down undoes them.
// A lab made by a run or study records it as its owner; a Claim is the machine-wide
// measurement lock they hold.
package lab
