// Package stats holds the few statistics every figure of wirelab is computed with (mean,
// coefficient of variation, Student-t confidence interval, nearest-rank percentile, the
// batch-means spread of a per-second series, latency histograms, Mann-Whitney U, the load
// at which pass/fail trials pass half the time), and the one place a ratio of two means is
// judged: its interval on the log scale, read as higher, lower, no measurable difference
// within a margin the caller gives (the machine's run-to-run spread, which MeasureMargin
// estimates from repeated runs), or too short to tell, and goals judged on a range.
package stats
