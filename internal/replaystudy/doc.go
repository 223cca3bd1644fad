// Package replaystudy is `wirelab replay` as a study of the engine: a captured query log
// (package replay's child process on the lab's client host) replayed against the lab's
// server, or an existing one, at every wire of a sweep and in every series asked (plain,
// compression, TLS, the tunnel), each point from the same starting data (a dump loaded
// once, or sysbench's tables, put back between points), into result.Points that carry
// what a `run` point carries plus the replay's own figures.
package replaystudy
