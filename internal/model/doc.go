// Package model predicts what a measured workload does on another link and machine. It
// solves a closed queueing network exactly (mva.go) whose stations a fit of a run's
// per-transaction profiles supplies (fit.go, predict.go): the client and server CPUs, the
// uplink, the downlink and the round trips, a link being a physical one or a token-bucket
// shaper like the lab's (shaper.go); crossover.go finds the link rate where compression
// stops paying, explain.go which station a missed prediction got wrong.
package model
