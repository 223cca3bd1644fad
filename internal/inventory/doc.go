// Package inventory reads hosts.yaml (--hosts): the real machines a study runs on, each with
// its role (one or more clients, a server, replicas), how to reach it over SSH, the NIC to
// shape on each client, and for a server whether wirelab starts MariaDB itself or uses an existing one.
// Every error names the host entry and the field to fix. docs/hosts.example.yaml is the
// documented example.
package inventory
