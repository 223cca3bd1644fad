// Package compare sets result directories side by side, point by point, the way benchstat
// sets benchmark runs, on independent units only: a point's repeats, or one run's batch
// means (the batches the report's intervals use), never its correlated seconds, and the
// same unit on both sides of a row. Per point and metric (TPS, latency p50/p95/p99) it
// gives each run's median and the change against the first run: a Hodges-Lehmann ratio
// with its 95% interval and a Mann-Whitney U test of the same units, called better or
// worse only when significant at α = 0.05, on at least 4 units a side and beyond a
// margin (the lab's run-to-run spread); "~" otherwise. Points are matched by the
// conditions they ran under; points without a match, and repeats against batches, are
// refused by name before anything is printed.
package compare
