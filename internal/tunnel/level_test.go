package tunnel

import (
	"testing"
	"time"
)

// TestLevelPolicy: on a link-bound WAN the level steps up while the encoder is busy at most
// levelUp of the time, steps down above levelDown and does not retry the level it left for
// levelRetry; it holds without a bottleneck, between decisions and on too few bytes.
func TestLevelPolicy(t *testing.T) {
	at := time.Unix(1000, 0)
	l := newLevelPolicy()
	// step feeds levelEvery of traffic with the encoder busy the given share of it, then decides.
	step := func(busy float64, bound bool) (int, bool) {
		l.observe(4<<20, time.Duration(busy*float64(levelEvery)))
		at = at.Add(levelEvery)
		return l.decide(at, bound)
	}
	if lvl, changed := l.decide(at, true); lvl != 1 || changed {
		t.Fatalf("start: level %d changed %v, want 1", lvl, changed)
	}
	l.observe(4<<20, time.Millisecond)
	if _, changed := l.decide(at.Add(time.Second), true); changed {
		t.Fatal("changed level before levelEvery")
	}
	for i, want := range []int{3, 7, 11, 11} {
		if lvl, _ := step(0.05, true); lvl != want {
			t.Fatalf("idle encoder on a bound link, decision %d: level %d, want %d", i, lvl, want)
		}
	}
	if lvl, changed := step(0.4, true); lvl != 11 || changed {
		t.Fatalf("encoder busy 40%%: level %d changed %v, want 11 kept", lvl, changed)
	}
	if lvl, changed := step(0.9, true); lvl != 7 || !changed {
		t.Fatalf("encoder busy 90%%: level %d changed %v, want 7", lvl, changed)
	}
	if lvl, _ := step(0.05, true); lvl != 7 {
		t.Fatalf("right after leaving 11 for being slow: level %d, want 7 held", lvl)
	}
	at = at.Add(levelRetry)
	if lvl, _ := step(0.05, true); lvl != 11 {
		t.Fatalf("after levelRetry: level %d, want 11 tried again", lvl)
	}
	l2 := newLevelPolicy()
	l2.decide(at, true)
	l2.observe(4<<20, 0)
	if _, changed := l2.decide(at.Add(levelEvery), false); changed {
		t.Fatal("stepped up while the link is not the bottleneck")
	}
	l2.observe(1000, 0)
	if _, changed := l2.decide(at.Add(3*levelEvery), true); changed {
		t.Fatal("changed level on fewer than levelMinRaw bytes")
	}
}
