// Package lab builds and removes the lab: network namespaces for the client, wire, server
// (and replica) hosts, veth pairs through the wire host, addresses from 198.18.0.0/15, and
// a state file under /run/wirelab so `wirelab down` can remove a lab after a kill -9.
package lab
