// Package study turns a study into a matrix of cells and measures each cell on a lab: the
// engine (engine.go) runs one sysbench point while sampling the wire and CPUs and turns it
// into a result.Point; bandwidth.go, transport.go and replication.go build the matrices of
// the three field studies, and run.go the single series of `wirelab run`.
package study
