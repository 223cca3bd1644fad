// Package study is wirelab's one measuring engine. A Session owns everything every study
// shares — the lab's hosts and wire, the database servers and the prepared data set, the
// wire's shaping and `link check` after each change, the wire and CPU sampler and the
// per-second series, progress with an ETA, Ctrl-C (first: finish the point; second:
// abort), results.json after every point, the environment and the report — and runs one
// Study, a plug-in that says only what differs: the hosts and servers it needs, its setup
// on the lab, its points one at a time and how one point is measured.
//
// run.go, bandwidth.go and transport.go are the closed-loop studies (sharing matrix.go),
// whose load comes from a Driver (load.go): sysbench.go or pgbench.go. The replication
// study lives in internal/replication and plugs in the same way.
package study
