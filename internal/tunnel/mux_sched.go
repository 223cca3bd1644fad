package tunnel

import "time"

// The writer role of a mux link: one goroutine at a time collects a frame's records from
// the ready streams (round robin, muxQuantum per turn), encodes and writes it. A stream's
// reader that finds nobody writing takes the role itself for up to inlineFrames frames, so
// a lone request costs no goroutine hand-off (as the per-connection sender's fast path); if
// more is ready after those it hands the role to the writer goroutine and returns to its
// socket.
// Goroutines that must never block on the WAN (the WAN reader, local writers returning
// credit) only wake the writer goroutine.
// On Linux a link whose sockets are plain TCP runs a relay loop (relayloop_linux.go)
// instead of the stream readers and the WAN reader: it takes the role at the end of each
// round of reads and writes without blocking, so it never waits on the WAN either.

// ring is a FIFO of streams.
type ring struct {
	buf  []*stream
	head int
}

func (r *ring) push(st *stream) { r.buf = append(r.buf, st) }

func (r *ring) len() int { return len(r.buf) - r.head }

func (r *ring) pop() *stream {
	st := r.buf[r.head]
	r.buf[r.head] = nil
	r.head++
	if r.head == len(r.buf) {
		r.buf, r.head = r.buf[:0], 0
	} else if r.head >= 64 && r.head*2 >= len(r.buf) {
		n := copy(r.buf, r.buf[r.head:])
		clear(r.buf[n:])
		r.buf, r.head = r.buf[:n], 0
	}
	return st
}

// markReady queues st for the scheduler. Caller holds m.mu.
func (m *muxLink) markReady(st *stream) {
	if !st.inReady {
		st.inReady = true
		m.ready.push(st)
	}
}

// claim takes the writer role if nobody holds it and there is work. Caller holds m.mu.
func (m *muxLink) claim() bool {
	if m.writing || m.err != nil || m.ready.len() == 0 {
		return false
	}
	m.writing = true
	return true
}

// kick makes sure someone writes what is ready, without writing here: the relay loop at
// the end of its round when it is in one, else the writer goroutine.
func (m *muxLink) kick() {
	if m.loop.inRound() {
		return
	}
	m.mu.Lock()
	ok := m.claim()
	m.mu.Unlock()
	if ok {
		m.wake <- struct{}{} // cap 1, and only the holder of the role sends
	}
}

// writer is the writer goroutine: it writes while it holds the role. A role handed over
// just before the link failed still arrives on wake, so wake is drained before returning.
func (m *muxLink) writer() {
	for {
		select {
		case <-m.wake:
			m.write(false)
		case <-m.done:
			select {
			case <-m.wake:
				m.write(false)
			default:
			}
			return
		}
	}
}

// inlineFrames is the most frames a stream's reader writes while it holds the writer
// role: a few frames cover what other streams queued meanwhile at low concurrency without
// a hand-off, and the bound returns the reader to its own socket under load.
const inlineFrames = 4

// handOff reports whether an inline writer that wrote frames frames passes the role on:
// a stream's reader after inlineFrames, the relay loop after loopFrames or once the WAN
// socket is full.
func (m *muxLink) handOff(frames int) bool {
	if m.loop == nil {
		return frames == inlineFrames
	}
	return frames == loopFrames || m.loop.backlogged()
}

// write writes frames until nothing is ready, then gives up the role. inline (a stream's
// reader holds the role) writes at most inlineFrames frames and hands any rest to the
// writer goroutine. The holder of the role owns the encoder: once the link failed it
// releases it.
func (m *muxLink) write(inline bool) {
	for frames := 0; ; frames++ {
		m.mu.Lock()
		if m.err != nil {
			m.mu.Unlock()
			m.fr.close()
			return
		}
		if inline && m.ready.len() > 0 && m.handOff(frames) {
			m.mu.Unlock()
			m.wake <- struct{}{} // the role passes to the writer goroutine
			return
		}
		if m.holding(time.Now()) {
			m.writing = false
			m.mu.Unlock()
			return
		}
		held := !m.heldSince.IsZero()
		batch, data, fins := m.collect()
		if m.ready.len() == 0 {
			m.heldSince = time.Time{}
		}
		if len(batch) == 0 {
			m.writing = false
			m.mu.Unlock()
			return
		}
		m.mu.Unlock()
		if err := m.send(batch, data, inline, held); err != nil {
			m.fail(err)
			continue // releases the encoder above
		}
		for _, st := range fins {
			st.halfDone() // the fin is on the WAN
		}
	}
}

// holding reports whether what is ready waits for more bytes (GroupWait): until the wait
// has passed since the first of them became ready, unless a frame's worth is ready or a
// stream has an open, a fin, a reset or credit to send (a connection's start and end never
// wait, nor does the credit the other end's sender may be waiting for).
// While it holds, a timer hands the writer role back when the wait ends. Caller holds m.mu
// and the writer role (which owns m.fr).
func (m *muxLink) holding(now time.Time) bool {
	if m.wait.IsZero() || m.ready.len() == 0 {
		return false
	}
	wait := m.wait.at(m.fr.rtt.get())
	if wait <= 0 {
		return false
	}
	queued := 0
	for _, st := range m.ready.buf[m.ready.head:] {
		if st.needOpen || st.reset != "" || (st.fin && !st.finSent) || st.owed > 0 {
			return false
		}
		queued += st.queued
	}
	if queued+recHeaderLen >= m.maxSize {
		return false
	}
	if m.heldSince.IsZero() {
		m.heldSince = now
	}
	left := m.heldSince.Add(wait).Sub(now)
	if left <= 0 {
		return false
	}
	if m.holdTimer == nil {
		m.holdTimer = time.AfterFunc(left, m.kick)
	} else {
		m.holdTimer.Reset(left)
	}
	return true
}

// send encodes the records as one frame and writes it to the WAN; held says the records
// waited for more (GroupWait), which the stats count as a timeout flush.
func (m *muxLink) send(batch []byte, data int, inline, held bool) error {
	typ, err := m.fr.begin()
	if err != nil {
		return err
	}
	if err := m.fr.add(typ, batch); err != nil {
		return err
	}
	reason := flushIdle
	if len(batch) >= m.maxSize {
		reason = flushSize
	} else if held {
		reason = flushTimeout
	} else if inline {
		m.t.c.flushInline.Add(1)
	}
	return m.fr.flush(typ, reason, data)
}

// collect builds the next frame's records into m.batch: round robin over the ready
// streams, at most muxQuantum data bytes of each per turn, until the frame is full. It
// returns the records, how many data bytes they carry, and the streams whose fin it sent.
// Caller holds m.mu.
func (m *muxLink) collect() (batch []byte, data int, fins []*stream) {
	b := m.batch[:0]
	// Room for a record header and a byte of data: every turn then makes progress (a data
	// byte or a control record), so the loop ends.
	for m.ready.len() > 0 && len(b)+recHeaderLen < m.maxSize {
		st := m.ready.pop()
		st.inReady = false
		if st.needOpen {
			b = appendRecord(b, recOpen, st.id, 0)
			st.needOpen = false
		}
		if st.owed > 0 && !st.dead.Load() {
			b = appendRecord(b, recCredit, st.id, st.owed)
		}
		st.owed = 0
		if st.reset != "" {
			if !st.resetSent {
				b = appendRecord(b, recReset, st.id, len(st.reset))
				b = append(b, st.reset...)
				st.resetSent = true
			}
			st.dropQueued()
			continue
		}
		var n int
		b, n = st.take(b, min(muxQuantum, st.credit, m.maxSize-len(b)-recHeaderLen))
		data += n
		if st.fin && st.queued == 0 && !st.finSent {
			b = appendRecord(b, recFin, st.id, 0)
			st.finSent = true
			fins = append(fins, st)
		}
		if st.sendable() {
			m.markReady(st)
		}
	}
	m.batch = b
	return b, data, fins
}
