# paired-ratio.awk: how two rows that alternate round by round compare, from their rounds.
# Input: one line per round and figure, "NAME A B": the figure NAME of row A and of row B
# in one round (NAME without blanks). Output: one line per NAME, in the order first seen,
# "NAME|RATIO|LO|HI|N": the geometric mean of the rounds' A/B ratios and its 95% interval
# (Student's t on the log ratios, so a drift both rows share cancels round by round; "-"
# with fewer than two rounds), over the N rounds where both figures are above 0.
# The interval is stats.CI95's on the log ratios (internal/stats), which a test in
# internal/docscheck holds this to. Used by scripts/bench-tunnel.sh.
BEGIN {
	# the 0.975 quantile of Student's t by degrees of freedom, 1..30 (stats.t975's table)
	split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131 " \
		"2.120 2.110 2.101 2.093 2.086 2.080 2.074 2.069 2.064 2.060 2.056 2.052 2.048 2.045 2.042", tq, " ")
}
# t975 DF: the table, then stats.t975's Cornish-Fisher expansion around the normal quantile
function t975(df, z) {
	if (df <= 30) return tq[df]
	z = 1.959963984540054
	return z + (z * z * z + z) / (4 * df) + (5 * z ^ 5 + 16 * z * z * z + 3 * z) / (96 * df * df)
}
NF == 3 && $2 > 0 && $3 > 0 {
	if (!($1 in n)) order[++names] = $1
	d = log($2 / $3)
	n[$1]++
	sum[$1] += d
	sq[$1] += d * d
}
END {
	for (i = 1; i <= names; i++) {
		k = order[i]
		m = sum[k] / n[k]
		if (n[k] < 2) { printf "%s|%.4f|-|-|%d\n", k, exp(m), n[k]; continue }
		v = (sq[k] - n[k] * m * m) / (n[k] - 1)
		sd = v > 0 ? sqrt(v) : 0 # equal ratios can round below zero
		h = t975(n[k] - 1) * sd / sqrt(n[k])
		printf "%s|%.4f|%.4f|%.4f|%d\n", k, exp(m), exp(m - h), exp(m + h), n[k]
	}
}
