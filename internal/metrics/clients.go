package metrics

// SumClients is the samples of a load split among several client hosts, each sampled by
// its own Sampler (its shaped wire and its load driver's CPU) beside one server agent
// that every sampler reads: second by second, the wire's bytes and packets and the
// client CPU are summed over the clients; the server's and the machine's CPU, one
// agent's, are the first sampler's. The samplers tick on their own clocks a few
// milliseconds apart, so the i-th samples are taken as the same second; the sum covers
// the seconds every client has. T is the first client's.
func SumClients(per [][]Sample) []Sample {
	if len(per) == 0 {
		return nil
	}
	n := len(per[0])
	for _, ss := range per[1:] {
		n = min(n, len(ss))
	}
	out := make([]Sample, n)
	for i := range out {
		s := per[0][i]
		for _, ss := range per[1:] {
			x := ss[i]
			s.UpBytesPerS, s.DownBytesPerS = s.UpBytesPerS+x.UpBytesPerS, s.DownBytesPerS+x.DownBytesPerS
			s.UpPktsPerS, s.DownPktsPerS = s.UpPktsPerS+x.UpPktsPerS, s.DownPktsPerS+x.DownPktsPerS
			s.CPUClient += x.CPUClient
		}
		out[i] = s
	}
	return out
}

// SumClientTotals is SumClients for the whole window's totals.
func SumClientTotals(ts []Totals) Totals {
	if len(ts) == 0 {
		return Totals{}
	}
	t := ts[0]
	for _, x := range ts[1:] {
		t.UpBytes, t.DownBytes, t.UpPkts, t.DownPkts = t.UpBytes+x.UpBytes, t.DownBytes+x.DownBytes, t.UpPkts+x.UpPkts, t.DownPkts+x.DownPkts
		t.CPUClientSec += x.CPUClientSec
	}
	return t
}
