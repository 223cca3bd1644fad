package study

import (
	"testing"
	"time"
)

func TestCellsWalkInOrderAndCountWhatRemains(t *testing.T) {
	var s Cells[LoadCell]
	if _, ok := s.Next(nil); ok || s.Total() != 0 || s.Remaining() != 0 {
		t.Fatal("an empty walk has a point")
	}
	s.Add(LoadCell{Series: "a", Duration: 10 * time.Second}, LoadCell{Series: "b", Duration: 20*time.Second + 400*time.Millisecond})
	if s.Total() != 2 || s.Estimate() != 34*time.Second { // each cell: duration + 2 s to start, 34.4 s
		t.Errorf("total %d, estimate %s; want 2 and 34s", s.Total(), s.Estimate())
	}
	var got []string
	for c, ok := s.Next(nil); ok; c, ok = s.Next(nil) {
		got = append(got, c.(LoadCell).Series)
		if len(got) == 1 && s.Remaining() != 22400*time.Millisecond {
			t.Errorf("after the first point %s remain, want 22.4s", s.Remaining())
		}
	}
	if len(got) != 2 || got[0] != "a" || got[1] != "b" || s.Remaining() != 0 {
		t.Errorf("walked %v, %s remain", got, s.Remaining())
	}
}
