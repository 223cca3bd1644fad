// Package stats holds the few statistics every figure of wirelab is computed with (mean,
// coefficient of variation, Student-t confidence interval, nearest-rank percentile, the
// batch-means spread of a per-second series, Fieller's interval for a ratio of two
// means, and the level at which pass/fail trials pass half the time), so a median or an interval means the same thing in a link check, a study and a
// report.
package stats
