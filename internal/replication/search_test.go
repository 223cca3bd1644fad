package replication

import (
	"math"
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
		s.Record(q, achieved, achieved <= capQPS, achieved < 0.9*q)
	}
	return probes
}

func TestSearch(t *testing.T) {
	tests := []struct {
		name        string
		cap, srcMax float64
		fitted      bool    // the search found a failing load above a passing one
		wantBest    float64 // the highest passing load when it did not
		wantLimited bool
		maxProbes   int
	}{
		{"climb then fit", 800, 1e9, true, 0, false, 4 + edgeProbes},
		{"below start", 320, 1e9, true, 0, false, 5 + edgeProbes},
		// climbs to Max and stops there.
		{"above max", 1e9, 1e9, false, 6000, false, 12},
		// the source tops out at 700: 936 achieves 700 < 842: stop.
		{"source-limited", 1e9, 700, false, 936, true, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Search{Start: 600, Factor: 1.25, Min: 60, Max: 6000, Precision: 0.05, Step: 6, MaxProbes: 30, EdgeProbes: edgeProbes}
			probes := drive(t, s, tc.cap, tc.srcMax)
			f := s.Limit()
			if len(probes) > tc.maxProbes || f.OK != tc.fitted || s.Limited() != tc.wantLimited {
				t.Fatalf("probes %v: fit %+v limited %v; want fitted %v limited %v, at most %d probes", probes, f, s.Limited(), tc.fitted, tc.wantLimited, tc.maxProbes)
			}
			if !tc.fitted && s.Best() != tc.wantBest {
				t.Errorf("probes %v: best %v, want %v", probes, s.Best(), tc.wantBest)
			}
			if tc.fitted && (math.Abs(f.Est/tc.cap-1) > 0.03 || f.Lo > tc.cap || f.Hi < tc.cap) {
				t.Errorf("probes %v: limit %.0f (%.0f–%.0f), want within 3%% of %v and an interval holding it", probes, f.Est, f.Lo, f.Hi, tc.cap)
			}
			for _, q := range probes {
				if int(q)%6 != 0 {
					t.Fatalf("probe %v is not a whole transaction rate", q)
				}
			}
		})
	}
}

// One lucky pass above the limit does not make the limit: the probes after it go back to
// it, fail, and the fit settles below it.
func TestSearchLuckyPass(t *testing.T) {
	s := &Search{Start: 600, Factor: 1.25, Min: 60, Max: 6000, Precision: 0.01, Step: 6, MaxProbes: 30, EdgeProbes: edgeProbes}
	var lucky float64
	for q, ok := s.Next(); ok; q, ok = s.Next() {
		pass := q <= 800
		if q > 800 && q < 900 && lucky == 0 {
			lucky, pass = q, true
		}
		s.Record(q, q, pass, false)
	}
	f := s.Limit()
	if lucky == 0 || !f.OK || f.Est >= lucky || math.Abs(f.Est/800-1) > 0.04 {
		t.Errorf("lucky pass at %v: limit %+v, want near 800 and below the lucky pass", lucky, f)
	}
}

// The search stops as soon as the interval is within ±Precision, before its edge budget.
func TestSearchStopsAtPrecision(t *testing.T) {
	loose := &Search{Start: 600, Factor: 1.25, Min: 60, Max: 6000, Precision: 0.2, Step: 6, MaxProbes: 30, EdgeProbes: edgeProbes}
	tight := *loose
	tight.Precision = 0.001
	nl, nt := len(drive(t, loose, 800, 1e9)), len(drive(t, &tight, 800, 1e9))
	if f := loose.Limit(); nl >= nt || !f.OK || (f.Hi-f.Lo)/2 > 0.2*f.Est {
		t.Errorf("loose precision: %d probes, limit %+v; tight: %d probes", nl, f, nt)
	}
}
