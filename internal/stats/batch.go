package stats

// BatchMeans cuts a per-second series into the non-overlapping batches SeriesMean
// estimates from (k ≈ 10 batches of b = max(2, ⌊n/10⌋) seconds, the n mod b seconds
// nearest the warm-up left out) and returns each batch's mean with b. Consecutive
// seconds are correlated, batch means close to independent: they are the units a test
// of one run may count, where its seconds are not. Fewer than two seconds give no batch.
func BatchMeans(xs []float64) (means []float64, batchLen int) {
	bt := batchesOf(len(xs))
	means = make([]float64, bt.k)
	for i := range means {
		lo, hi := bt.span(i)
		means[i] = Mean(xs[lo:hi])
	}
	return means, bt.b
}
