// Package compare sets result directories side by side, point by point, the way benchstat
// sets benchmark runs: per point the median TPS of each run, the change against the first
// run with its 95% interval, and a Mann-Whitney U test that calls the change only when it
// is significant at α = 0.05, rests on at least 4 samples a side and exceeds a margin (the
// lab's run-to-run spread); "~" otherwise. Points are matched by the conditions they ran
// under (engine, driver, workload, threads, link); what may differ is the variant under
// test (series: compression, TLS, transport, channel). Points that find no match are
// refused by name before anything is printed.
package compare
