package replaystudy

import (
	"fmt"
	"time"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/replay"
)

// Cell is one point of a replay: the log replayed in one series on one wire of the sweep.
type Cell struct {
	Link   link.Condition
	Series Series
	// Index is the point's number in the run (1-based): it names the point's sessions
	// file, and every point after the first resets the data before its replay.
	Index    int
	expected time.Duration
}

// Wire is the cell's wire.
func (c Cell) Wire() *link.Condition {
	l := c.Link
	return &l
}

// Label names the cell in progress lines.
func (c Cell) Label() string { return fmt.Sprintf("%s at %s", c.Series.Name(), c.Link) }

// Expected is how long the cell should take.
func (c Cell) Expected() time.Duration { return c.expected }

// sessionsFile is the cell's sessions file, in the results directory.
func (c Cell) sessionsFile() string {
	return fmt.Sprintf("sessions-%02d-%s.jsonl", c.Index, c.Series.Name())
}

// resetGuess is what a cell adds to its replay's expected time for the data's reset: a
// guess for the ETA until points have been measured.
const resetGuess = 2 * time.Second

// expected is how long a replay of o's log on wire l should take: the log's span at the
// speed (or --for, when shorter); at --speed max, each statement once with a round trip
// of the wire, the sessions side by side.
func (o Options) expected(l link.Condition) time.Duration {
	s := o.Log.Scan
	var d time.Duration
	if o.Speed == replay.SpeedMax {
		d = time.Duration(s.Statements/max(s.Sessions, 1)) * (time.Millisecond + l.RTT())
	} else {
		d = time.Duration(float64(s.Span) / float64(o.Speed))
	}
	if o.For > 0 {
		d = min(d, o.For)
	}
	return d + resetGuess
}
