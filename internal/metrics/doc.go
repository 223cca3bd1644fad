// Package metrics samples, once a second while a benchmark point runs, what the network and
// the CPUs did: bytes and packets per direction on the wire namespace's interfaces, CPU
// (in cores) of the database server and of the load client, and the machine's total CPU. It also
// turns those numbers into a bottleneck verdict and holds the summary statistics (mean,
// coefficient of variation, 95% confidence interval) the studies report.
//
// Every kernel-facing sampler reads from an injectable procfs root (and, for the optional
// `ip -j` wire counter, an injectable command runner), so the parsers are tested from
// files captured on a real machine, without root.
//
// On real hosts (the SSH backend) the same counters are read by an Agent that wirelab runs
// there (`wirelab agent sample`), printed as AgentLines, and handed back to a local Sampler
// through Feeds, so the series are computed by the same code in both labs.
package metrics
