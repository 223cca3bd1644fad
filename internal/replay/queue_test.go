package replay

import (
	"testing"
	"time"
)

// A queue the reader keeps ahead of (never empty) does not grow with what passed
// through it.
func TestQueueNeverDrainedStaysSmall(t *testing.T) {
	q := newQueue()
	q.push(query(1, "1", 0, "select 1"))
	for i := 0; i < 100_000; i++ {
		q.push(query(int64(i+2), "1", 0, "select 1"))
		if ev, ok := q.pop(nil); !ok || ev.Line != int64(i+1) {
			t.Fatalf("pop %d: line %d, %v", i, ev.Line, ok)
		}
	}
	if c := cap(q.items); c > 64 {
		t.Errorf("after 100000 events through a queue holding one, its slice has room for %d", c)
	}
	q.close()
	if ev, ok := q.pop(nil); !ok || ev.Line != 100_001 {
		t.Errorf("the last event: %d %v", ev.Line, ok)
	}
	if _, ok := q.pop(nil); ok {
		t.Error("a closed, empty queue gave an event")
	}
}

// The budget holds its taker while it is spent, lets an event larger than all of it
// through alone, and gives up when told to stop.
func TestBudget(t *testing.T) {
	b := newBudget(100)
	if !b.take(60, nil) || !b.take(40, nil) {
		t.Fatal("within the budget")
	}
	got := make(chan bool)
	go func() { got <- b.take(10, nil) }()
	select {
	case <-got:
		t.Fatal("took more than the budget")
	case <-time.After(50 * time.Millisecond):
	}
	b.give(60)
	if !<-got {
		t.Fatal("not taken once given back")
	}
	b.give(40)
	b.give(10)
	if !b.take(500, nil) {
		t.Fatal("an event larger than the budget, with nothing held")
	}
	stop := make(chan struct{})
	close(stop)
	if b.take(1, stop) {
		t.Error("took with the budget spent and stop closed")
	}
}
