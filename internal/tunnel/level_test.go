package tunnel

import (
	"testing"
	"time"
)

// TestLevelPolicy: the level steps up while the encoder outruns the link by levelUp, down
// when it no longer does by levelDown, waits levelEvery and levelMinRaw between decisions,
// and stays put without a link rate.
func TestLevelPolicy(t *testing.T) {
	t0 := time.Unix(1000, 0)
	// feed encodes raw bytes at wireRate bytes of output per second of encoder time.
	feed := func(l *levelPolicy, wireRate float64) {
		const raw, wire = 4 << 20, 1 << 20
		l.observe(raw, wire, time.Duration(float64(wire)/wireRate*float64(time.Second)))
	}
	const link = 2.5e6 // 20 Mbit/s in bytes/s
	l := newLevelPolicy()
	if lvl, changed := l.decide(t0, link); lvl != 1 || changed {
		t.Fatalf("start: level %d changed %v, want 1", lvl, changed)
	}
	feed(l, 100*link)
	if _, changed := l.decide(t0.Add(time.Second), link); changed {
		t.Fatal("changed level before levelEvery")
	}
	want := []int{3, 7, 11, 11}
	for i, w := range want {
		feed(l, 100*link)
		lvl, _ := l.decide(t0.Add(time.Duration(i+1)*levelEvery+time.Second), link)
		if lvl != w {
			t.Fatalf("fast encoder, decision %d: level %d, want %d", i, lvl, w)
		}
	}
	feed(l, 2*link) // between levelDown and levelUp: stay
	if lvl, changed := l.decide(t0.Add(time.Minute), link); lvl != 11 || changed {
		t.Fatalf("encoder 2x the link: level %d changed %v, want 11 kept", lvl, changed)
	}
	feed(l, link) // the encoder no longer keeps the link full
	if lvl, changed := l.decide(t0.Add(2*time.Minute), link); lvl != 7 || !changed {
		t.Fatalf("encoder as fast as the link: level %d changed %v, want 7", lvl, changed)
	}
	feed(l, 100*link)
	if lvl, changed := l.decide(t0.Add(3*time.Minute), 0); lvl != 7 || changed {
		t.Fatalf("no link rate: level %d changed %v, want 7 kept", lvl, changed)
	}
	l2 := newLevelPolicy()
	l2.decide(t0, link)
	l2.observe(1000, 100, time.Nanosecond)
	if _, changed := l2.decide(t0.Add(time.Hour), link); changed {
		t.Fatal("changed level on fewer than levelMinRaw bytes")
	}
}
