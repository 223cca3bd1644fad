package replication

import "testing"

// drive runs a search against a channel whose capacity is cap QPS (and whose source can
// deliver at most srcMax QPS) and returns the probed loads.
func drive(t *testing.T, s *Search, capQPS, srcMax float64) []float64 {
	t.Helper()
	var probes []float64
	for q, ok := s.Next(); ok; q, ok = s.Next() {
		probes = append(probes, q)
		if len(probes) > 50 {
			t.Fatalf("search does not end: %v", probes)
		}
		achieved := min(q, srcMax)
		s.Record(q, achieved <= capQPS, achieved < 0.9*q)
	}
	return probes
}

func TestSearch(t *testing.T) {
	tests := []struct {
		name          string
		cap, srcMax   float64
		wantBest      float64
		wantUnbounded float64
		wantLimited   bool
		wantProbes    int
	}{
		// 300, 600 (bounded), 1200 (not), then 900, 750 (bounded).
		{"native-like", 800, 1e9, 900 - 150, 900, false, 5},
		// climbs 300..4800, then Max 6000, and stops there.
		{"above max", 1e9, 1e9, 6000, 0, false, 6},
		// 300 unbounded, 150 bounded, then 228 (unbounded) and 192.
		{"below start", 200, 1e9, 192, 228, false, 4},
		// the source tops out at 1000: 1200 achieves 1000 < 1080 and is bounded: stop.
		{"source-limited", 1e9, 1000, 1200, 0, true, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Search{Start: 300, Factor: 2, Min: 60, Max: 6000, Bisect: 2, Step: 6}
			probes := drive(t, s, tc.cap, tc.srcMax)
			if s.Best() != tc.wantBest || s.FirstUnbounded() != tc.wantUnbounded || s.Limited() != tc.wantLimited || len(probes) != tc.wantProbes {
				t.Fatalf("probes %v: best %v unbounded %v limited %v; want best %v unbounded %v limited %v in %d probes",
					probes, s.Best(), s.FirstUnbounded(), s.Limited(), tc.wantBest, tc.wantUnbounded, tc.wantLimited, tc.wantProbes)
			}
			for _, q := range probes {
				if int(q)%6 != 0 {
					t.Fatalf("probe %v is not a whole transaction rate", q)
				}
			}
		})
	}
}
