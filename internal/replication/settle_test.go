package replication

import (
	"context"
	"strings"
	"testing"
	"time"
)

// catchUps is a Replicator whose catch-ups take the given times in turn (the last one
// repeats); the other methods are not used by settle.
type catchUps struct {
	Replicator
	took  []time.Duration
	calls int
}

func (c *catchUps) CatchUp(context.Context, time.Duration) (time.Duration, error) {
	d := c.took[min(c.calls, len(c.took)-1)]
	c.calls++
	return d, nil
}

func TestSettleRepeatsALongCatchUp(t *testing.T) {
	rep := &catchUps{took: []time.Duration{25 * time.Second, 3 * time.Second, 200 * time.Millisecond}}
	r := &Study{o: Options{CatchUpTimeout: time.Minute}, rep: rep}
	if err := r.settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rep.calls != 3 {
		t.Errorf("%d catch-ups, want 3: the point must not start while the last catch-up left a backlog", rep.calls)
	}
}

// A replica that never settles (every catch-up long) fails the point once the catch-up
// timeout has passed, rather than holding the study forever.
func TestSettleGivesUpAtTheTimeout(t *testing.T) {
	rep := &catchUps{took: []time.Duration{2 * time.Second}}
	r := &Study{o: Options{CatchUpTimeout: 20 * time.Millisecond}, rep: rep}
	err := r.settle(context.Background())
	if err == nil || !strings.Contains(err.Error(), "kept falling behind") {
		t.Errorf("settle = %v, want an error once the catch-up timeout has passed", err)
	}
}
