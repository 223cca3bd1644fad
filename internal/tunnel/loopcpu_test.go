package tunnel

import (
	"slices"
	"testing"
)

// TestCPUSlots: relay threads go to the CPU with the fewest, the lowest-numbered on a tie,
// only to allowed CPUs, and a CPU given back is the next one taken.
func TestCPUSlots(t *testing.T) {
	var s cpuSlots
	allowed := []int{1, 2, 5}
	var got []int
	for range 5 {
		got = append(got, s.take(allowed))
	}
	if want := []int{1, 2, 5, 1, 2}; !slices.Equal(got, want) {
		t.Fatalf("five takes: CPUs %v, want %v", got, want)
	}
	s.put(5)
	if c := s.take(allowed); c != 5 {
		t.Fatalf("after CPU 5 was given back: took CPU %d, want 5", c)
	}
	for _, c := range []int{1, 1, 2, 2, 5} {
		s.put(c)
	}
	if len(s.loops) != 0 {
		t.Fatalf("every thread given back, still counted: %v", s.loops)
	}
	if c := s.take([]int{3}); c != 3 {
		t.Fatalf("one CPU allowed: took %d, want 3", c)
	}
}
