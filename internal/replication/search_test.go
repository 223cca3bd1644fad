package replication

import (
	"slices"
	"testing"
)

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
		wantProbes    []float64
	}{
		// climb 600, 750, 936 (fails), bisect 846 (fails), 798 (passes), 822 (fails):
		// within 5%: confirm 798.
		{"bisect to 5% and confirm", 800, 1e9, 798, 822, false, []float64{600, 750, 936, 846, 798, 822, 798}},
		// climbs to Max and stops there.
		{"above max", 1e9, 1e9, 6000, 0, false, []float64{600, 750, 936, 1170, 1464, 1830, 2286, 2856, 3570, 4464, 5580, 6000}},
		// 600 fails, step down 480, 384, 306 (passes), bisect 348, 330 (both fail), 318: within 5%, confirmed.
		{"below start", 320, 1e9, 318, 330, false, []float64{600, 480, 384, 306, 348, 330, 318, 318}},
		// the source tops out at 700: 750 achieves 700 < 675? no: 936 achieves 700 < 842: stop.
		{"source-limited", 1e9, 700, 936, 0, true, []float64{600, 750, 936}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Search{Start: 600, Factor: 1.25, Min: 60, Max: 6000, Precision: 0.05, Step: 6, MaxProbes: 30}
			probes := drive(t, s, tc.cap, tc.srcMax)
			if s.Best() != tc.wantBest || s.FirstUnbounded() != tc.wantUnbounded || s.Limited() != tc.wantLimited || !slices.Equal(probes, tc.wantProbes) {
				t.Fatalf("probes %v: best %v unbounded %v limited %v; want best %v unbounded %v limited %v, probes %v",
					probes, s.Best(), s.FirstUnbounded(), s.Limited(), tc.wantBest, tc.wantUnbounded, tc.wantLimited, tc.wantProbes)
			}
			if w := (s.FirstUnbounded() - s.Best()) / s.Best(); s.FirstUnbounded() > 0 && !s.Limited() && (w > 0.05 || !s.Confirmed()) {
				t.Errorf("bracket %v..%v is %.1f%% wide (confirmed %v)", s.Best(), s.FirstUnbounded(), 100*w, s.Confirmed())
			}
			for _, q := range probes {
				if int(q)%6 != 0 {
					t.Fatalf("probe %v is not a whole transaction rate", q)
				}
			}
		})
	}
}

// A limit that passes once by luck and fails its confirmation is not reported: the search
// goes on below it and confirms a lower one.
func TestSearchFailedConfirmation(t *testing.T) {
	s := &Search{Start: 600, Factor: 1.25, Min: 60, Max: 6000, Precision: 0.05, Step: 6, MaxProbes: 30}
	seen := map[float64]int{}
	var lucky float64
	for q, ok := s.Next(); ok; q, ok = s.Next() {
		seen[q]++
		pass := q <= 800
		if seen[q] == 2 && lucky == 0 { // the first confirmation fails
			lucky, pass = q, false
		}
		s.Record(q, pass, false)
	}
	if lucky == 0 || s.Best() >= lucky || s.FirstUnbounded() != lucky || !s.Confirmed() {
		t.Errorf("lucky %v: best %v first failed %v confirmed %v: a failed confirmation must move the limit below it",
			lucky, s.Best(), s.FirstUnbounded(), s.Confirmed())
	}
}
