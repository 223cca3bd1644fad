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
	top := adaptLevels[len(adaptLevels)-1]
	below := adaptLevels[len(adaptLevels)-2]
	for i := range adaptLevels {
		want := adaptLevels[min(i+1, len(adaptLevels)-1)]
		if lvl, _ := step(0.05, true); lvl != want {
			t.Fatalf("idle encoder on a bound link, decision %d: level %d, want %d", i, lvl, want)
		}
	}
	if lvl, changed := step(0.4, true); lvl != top || changed {
		t.Fatalf("encoder busy 40%%: level %d changed %v, want %d kept", lvl, changed, top)
	}
	if lvl, changed := step(0.9, true); lvl != below || !changed {
		t.Fatalf("encoder busy 90%%: level %d changed %v, want %d", lvl, changed, below)
	}
	if lvl, _ := step(0.05, true); lvl != below {
		t.Fatalf("right after leaving %d for being slow: level %d, want %d held", top, lvl, below)
	}
	at = at.Add(levelRetry)
	if lvl, _ := step(0.05, true); lvl != top {
		t.Fatalf("after levelRetry: level %d, want %d tried again", lvl, top)
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
