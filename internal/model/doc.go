// Package model predicts what a measured workload does on another link and machine. It
// solves a closed queueing network by exact Mean Value Analysis (mva.go) and maps a
// point's per-transaction profile onto its stations (predict.go): the client and server
// CPUs, the uplink, the downlink and the round trips. fit.go turns a series of measured
// points into that mapping and reports how far it is off on those same points.
package model
