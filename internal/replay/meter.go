package replay

import (
	"net"
	"sync/atomic"
	"time"
)

// meter is a connection as the driver dialed it, below TLS and compression, counting what
// crosses it: bytes each way and round trips. A round trip is a turn of the conversation:
// a read that follows a client write. The connection starts as if the client had just
// written (the last packet of TCP's handshake, or a unix socket's connect), so a server
// that speaks first (MySQL's greeting, which it can only send once the handshake is done)
// costs the round trip it does. The TCP handshake itself is not seen here; connect adds
// it.
//
// A driver may read on another goroutine than it writes (pgconn's background reader), so
// every field is atomic.
type meter struct {
	net.Conn
	clock *clock

	out, in, turns atomic.Int64
	wrote          atomic.Bool // the last operation was a write
	// firstWrite and lastRead are clock readings (ns) of the first write since mark and of
	// the last read: a statement's latency runs from its send to the last byte of its reply.
	firstWrite, lastRead atomic.Int64
}

// clock reads monotonic nanoseconds since a fixed start, so times fit in an int64.
type clock struct{ start time.Time }

func newClock() *clock { return &clock{start: time.Now()} }

func (c *clock) now() int64 { return int64(time.Since(c.start)) }

// at is the wall time of a clock reading.
func (c *clock) at(ns int64) time.Time { return c.start.Add(time.Duration(ns)) }

func newMeter(c net.Conn, clk *clock) *meter {
	m := &meter{Conn: c, clock: clk}
	m.wrote.Store(true)
	return m
}

// Read implements net.Conn.
func (m *meter) Read(p []byte) (int, error) {
	n, err := m.Conn.Read(p)
	if n > 0 {
		m.in.Add(int64(n))
		m.lastRead.Store(m.clock.now())
		if m.wrote.Swap(false) {
			m.turns.Add(1)
		}
	}
	return n, err
}

// Write implements net.Conn.
func (m *meter) Write(p []byte) (int, error) {
	m.firstWrite.CompareAndSwap(0, m.clock.now())
	m.wrote.Store(true)
	n, err := m.Conn.Write(p)
	m.out.Add(int64(n))
	return n, err
}

// wire is what crossed a connection over some span: bytes each way and round trips.
type wire struct {
	Out, In, RoundTrips int64
}

func (w wire) add(o wire) wire {
	return wire{Out: w.Out + o.Out, In: w.In + o.In, RoundTrips: w.RoundTrips + o.RoundTrips}
}

func (w wire) sub(o wire) wire {
	return wire{Out: w.Out - o.Out, In: w.In - o.In, RoundTrips: w.RoundTrips - o.RoundTrips}
}

// mark starts a span: the counters so far, and no first write yet.
func (m *meter) mark() wire {
	m.firstWrite.Store(0)
	return m.counts()
}

func (m *meter) counts() wire {
	return wire{Out: m.out.Load(), In: m.in.Load(), RoundTrips: m.turns.Load()}
}

// span is what crossed since mark, and the span's send and last reply (clock readings;
// send is 0 when nothing was written).
func (m *meter) span(from wire) (w wire, send, reply int64) {
	return m.counts().sub(from), m.firstWrite.Load(), m.lastRead.Load()
}
