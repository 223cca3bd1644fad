package replay

import (
	"sync"

	"github.com/wirelab/wirelab/internal/querylog"
)

// budget bounds the bytes of statements read from the log and not yet replayed, over all
// sessions: the reader takes from it before it queues an event and blocks while it is
// spent; a session gives back once the event is done with. So memory stays bounded
// whatever the log's size. An event larger than the whole budget still passes when
// nothing else is held, so one huge statement cannot stall the replay.
type budget struct {
	mu    sync.Mutex
	limit int64
	used  int64
	freed chan struct{} // a token after each release, for a reader that waits
}

func newBudget(limit int64) *budget {
	return &budget{limit: limit, freed: make(chan struct{}, 1)}
}

// take blocks until n bytes fit, or done is closed (then it returns false).
func (b *budget) take(n int64, done <-chan struct{}) bool {
	for {
		b.mu.Lock()
		if b.used == 0 || b.used+n <= b.limit {
			b.used += n
			b.mu.Unlock()
			return true
		}
		b.mu.Unlock()
		select {
		case <-b.freed:
		case <-done:
			return false
		}
	}
}

func (b *budget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
	select {
	case b.freed <- struct{}{}:
	default:
	}
}

// eventOverhead is an event's share beyond its text: the Event struct itself (about 180
// bytes) in a queue slot that may be up to twice as large as what it holds.
const eventOverhead = 400

// eventSize is what an event holds in memory, as the budget counts it.
func eventSize(ev *querylog.Event) int64 {
	n := int64(len(ev.SQL)+len(ev.Session)+len(ev.User)+len(ev.DB)) + eventOverhead
	for _, p := range ev.Params {
		n += int64(len(p)) + 16
	}
	return n + int64(len(ev.Null))
}

// queue is one session's events in log order: the reader pushes, the session pops. It
// grows as needed (the budget bounds it) and shrinks back when drained.
type queue struct {
	mu     sync.Mutex
	items  []querylog.Event
	head   int
	closed bool          // no more events will come
	wake   chan struct{} // a token after each push or close
}

func newQueue() *queue { return &queue{wake: make(chan struct{}, 1)} }

func (q *queue) push(ev querylog.Event) {
	q.mu.Lock()
	if q.head > 0 && q.head >= len(q.items)/2 {
		// Move what is left to the front, so a queue that never drains does not grow.
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	q.items = append(q.items, ev)
	q.mu.Unlock()
	q.signal()
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// pop returns the next event, waiting for one; ok is false once the queue is closed and
// empty, or when done is closed.
func (q *queue) pop(done <-chan struct{}) (ev querylog.Event, ok bool) {
	for {
		q.mu.Lock()
		if q.head < len(q.items) {
			ev = q.items[q.head]
			q.items[q.head] = querylog.Event{} // let its strings go
			q.head++
			if q.head == len(q.items) {
				q.items, q.head = q.items[:0], 0
				if cap(q.items) > 1024 {
					q.items = nil
				}
			}
			q.mu.Unlock()
			return ev, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return ev, false
		}
		select {
		case <-q.wake:
		case <-done:
			return ev, false
		}
	}
}
