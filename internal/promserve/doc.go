// Package promserve serves Prometheus metrics over HTTP at /metrics on a listener of its
// own: the endpoint that a tunnel end and a measuring command (run, the studies) open
// with --metrics-listen, each after checking the address with flagx.CheckListen.
package promserve
