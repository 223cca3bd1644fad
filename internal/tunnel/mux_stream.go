package tunnel

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// stream is one client connection on a mux link: its local peer (the client at the
// entry, the server at the exit), what its reader queued for the WAN, and what the WAN
// delivered that its local peer has not taken yet.
//
// Ending: each half ends on its own. The send half when the fin record (after every queued
// byte) is collected; the receive half when the peer's fin is delivered and the local peer
// half-closed. When both have, the stream is done. A failure anywhere aborts it: the
// local peer gets a reset, the other end a reset record (unless the link itself failed).
type stream struct {
	m    *muxLink
	id   uint32
	conn net.Conn        // nil at the exit until the server is dialled
	raw  syscall.RawConn // for non-blocking writes to the local peer; nil without one
	sock *sockConn       // the local peer when the link's relay loop reads it, else nil

	// Send half, under m.mu.
	chunks    []piece // reads queued for the scheduler; the first from off
	off       int
	queued    int
	credit    int
	needOpen  bool
	fin       bool // the local peer reached EOF: a fin follows the queued bytes
	finSent   bool
	reset     string // non-empty: send a reset record, then nothing more
	resetSent bool
	owed      int // credit to return to the peer
	inReady   bool
	stalled   bool          // bytes queued and no credit (noteStall)
	room      chan struct{} // cap 1: the scheduler took bytes of a full queue
	polling   bool          // the relay loop reads sock (under the loop's lock)

	// Binlog recoding (binlog.go), at the exit when it is on: bin and segs belong to the
	// server's reader, watch and bdec to the WAN reader.
	bin   *binlogEncoder
	segs  []segment
	watch *dumpWatch
	bdec  *binlogDecoder

	// Receive half, under omu.
	omu       sync.Mutex
	out       []*[]byte // bytes for the local peer, in order
	outBytes  int
	flushing  bool // outLoop is writing out
	peerFin   bool
	closed    bool      // the local peer was half-closed
	delivered int       // bytes written to the local peer, not yet returned as credit
	window    int       // the credit the sender may have out: streamWindow, grown by grow
	epoch     time.Time // grow: when the bytes in epochN began to be returned
	epochN    int
	outSig    chan struct{}

	halves   atomic.Int32 // halves ended cleanly
	dead     atomic.Bool
	done     chan struct{}
	doneOnce sync.Once
	err      error // why it was aborted; read after done
}

func newStream(m *muxLink, id uint32, conn net.Conn) *stream {
	st := &stream{m: m, id: id, credit: streamWindow, window: streamWindow, room: make(chan struct{}, 1),
		outSig: make(chan struct{}, 1), done: make(chan struct{})}
	if conn != nil {
		st.attach(conn)
	}
	return st
}

// attach sets the local peer. At the exit, before the dial returns, deliver only queues.
func (st *stream) attach(conn net.Conn) {
	var raw syscall.RawConn
	if sc, ok := conn.(syscall.Conn); ok {
		raw, _ = sc.SyscallConn()
	}
	st.omu.Lock()
	st.conn, st.raw = conn, raw
	st.omu.Unlock()
}

// piece is a read (or part of one) queued for the scheduler, sent in records of its kind
// (recData, or recBinlog for recoded binlog packets).
type piece struct {
	b    *[]byte
	kind recKind
}

// sendable reports whether the scheduler has something of st to send. Caller holds m.mu.
func (st *stream) sendable() bool {
	return st.needOpen || st.owed > 0 || (st.reset != "" && !st.resetSent) ||
		(st.queued > 0 && st.credit > 0) || (st.fin && st.queued == 0 && !st.finSent)
}

// take appends data records of up to max queued bytes to b. Caller holds m.mu.
func (st *stream) take(b []byte, max int) ([]byte, int) {
	n := 0
	for max > 0 && len(st.chunks) > 0 {
		c := *st.chunks[0].b
		k := min(len(c)-st.off, max)
		b = appendRecord(b, st.chunks[0].kind, st.id, k)
		b = append(b, c[st.off:st.off+k]...)
		st.off += k
		n += k
		max -= k
		if st.off == len(c) {
			bufPool.Put(st.chunks[0].b)
			// Shift rather than reslice: the queue keeps its array, and the next read's
			// append does not allocate one (usually one or two pieces are queued).
			left := copy(st.chunks, st.chunks[1:])
			st.chunks[left] = piece{}
			st.chunks = st.chunks[:left]
			st.off = 0
		}
	}
	full := st.queued >= sendQueueLimit
	st.queued -= n
	st.credit -= n
	st.noteStall()
	if full && st.queued < sendQueueLimit {
		if st.sock != nil {
			if !st.fin {
				st.m.loop.resume(st)
			}
		} else {
			select {
			case st.room <- struct{}{}:
			default:
			}
		}
	}
	return b, n
}

// noteStall counts the stream running out of credit with bytes left to send, once per
// stall. Caller holds m.mu.
func (st *stream) noteStall() {
	stalled := st.queued > 0 && st.credit <= 0
	if stalled && !st.stalled {
		st.m.t.c.creditStalls.Add(1)
	}
	st.stalled = stalled
}

// dropQueued forgets what the reader queued (the stream is being reset). Caller holds m.mu.
func (st *stream) dropQueued() {
	for _, c := range st.chunks {
		bufPool.Put(c.b)
	}
	st.chunks, st.off, st.queued = nil, 0, 0
}

// readLoop reads the local peer into the send queue until EOF (a fin follows) or failure.
// A reader that finds nobody holding the writer role writes the frame itself.
func (st *stream) readLoop() {
	m := st.m
	for {
		m.mu.Lock()
		for st.queued >= sendQueueLimit && m.err == nil && !st.dead.Load() {
			m.mu.Unlock()
			select {
			case <-st.room:
			case <-st.done:
			case <-m.done:
			}
			m.mu.Lock()
		}
		stop := m.err != nil || st.dead.Load()
		m.mu.Unlock()
		if stop {
			return
		}
		b := bufPool.Get().(*[]byte)
		*b = (*b)[:cap(*b)]
		n, err := st.conn.Read(*b)
		if st.queueRead(b, n, err, true) {
			m.write(true)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				st.abort(fmt.Errorf("read from local peer: %w", err), true)
			}
			return
		}
	}
}

// queueRead queues the n bytes a read of the local peer put in b, or its end, for the
// scheduler; with claim, it reports whether the caller took the writer role. The relay loop
// stops reading a stream whose queue is full (take resumes it) or that ended.
func (st *stream) queueRead(b *[]byte, n int, err error, claim bool) bool {
	m := st.m
	one, more := piece{b, recData}, []piece(nil)
	if n > 0 {
		*b = (*b)[:n]
		one, more = st.recode(b)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case n == 0 || st.reset != "":
		bufPool.Put(one.b)
		for _, c := range more {
			bufPool.Put(c.b)
		}
	case more != nil:
		st.chunks = append(st.chunks, more...)
		st.queued += n
	default:
		st.chunks = append(st.chunks, one)
		st.queued += n
	}
	if errors.Is(err, io.EOF) {
		st.fin = true
	}
	st.noteStall()
	if st.sendable() {
		m.markReady(st)
	}
	if st.sock != nil && (err != nil || st.queued >= sendQueueLimit) {
		m.loop.pause(st)
	}
	return claim && m.claim()
}

// recode returns the read in b as what to queue: one piece, itself as data or binlog, or
// with binlog recoding on, its recoded packets and the rest in order, copied into buffers
// of their own (b goes back to the pool).
func (st *stream) recode(b *[]byte) (piece, []piece) {
	if st.bin == nil {
		return piece{b, recData}, nil
	}
	events, passed := st.bin.events, st.bin.passed
	st.segs = st.bin.recode(*b, st.segs)
	st.m.t.c.binlogSent.Add(st.bin.events - events)
	st.m.t.c.binlogPassed.Add(st.bin.passed - passed)
	if len(st.segs) == 1 {
		return piece{b, st.segs[0].kind}, nil
	}
	out := make([]piece, 0, len(st.segs))
	for _, sg := range st.segs {
		c := bufPool.Get().(*[]byte)
		*c = append((*c)[:0], (*b)[sg.start:sg.end]...)
		out = append(out, piece{c, sg.kind})
	}
	bufPool.Put(b)
	return piece{}, out
}

// deliverRecord hands a data or binlog record's payload to the local peer; binlog records
// are restored first. At the exit, a client's bytes are watched for a binlog dump's start.
func (st *stream) deliverRecord(k recKind, p []byte) error {
	if st.watch != nil && k == recData && st.watch.feed(p) {
		st.bin.armed.Store(true)
		st.watch = nil
	}
	if k == recData {
		if st.bdec != nil && st.bdec.pending() {
			return fmt.Errorf("%w: stream %d: data record inside a cut packet", errBinlogEvent, st.id)
		}
		return st.deliver(p)
	}
	if st.bdec == nil {
		st.bdec = &binlogDecoder{}
	}
	out, err := st.bdec.decode(p)
	if err != nil {
		return fmt.Errorf("stream %d: %w", st.id, err)
	}
	st.m.t.c.binlogRestored.Add(int64(st.bdec.restored))
	st.bdec.restored = 0
	if len(out) == 0 {
		return nil
	}
	return st.deliver(out)
}

// deliver hands data from the WAN to the local peer: written at once when the socket
// takes it (no goroutine hand-off), otherwise queued for outLoop. It never blocks: the
// WAN reader calls it. More than the stream's credit is a protocol error.
func (st *stream) deliver(p []byte) error {
	st.omu.Lock()
	defer st.omu.Unlock()
	if st.dead.Load() || st.closed {
		return nil
	}
	if st.outBytes+len(p) > st.window {
		return fmt.Errorf("%w: stream %d sent %d bytes past its credit", ErrCorrupt, st.id, st.outBytes+len(p)-st.window)
	}
	if len(st.out) == 0 && !st.flushing && st.raw != nil {
		n := st.tryWrite(p)
		p = p[n:]
		st.wrote(n)
	}
	if len(p) == 0 {
		return nil
	}
	for len(p) > 0 {
		b := bufPool.Get().(*[]byte)
		k := copy((*b)[:cap(*b)], p)
		*b = (*b)[:k]
		st.out = append(st.out, b)
		st.outBytes += k
		p = p[k:]
	}
	st.signalOut()
	return nil
}

// tryWrite writes what the local peer's socket takes now, without waiting: directly on
// a socket the relay loop took over (no closure to allocate per write), else through its
// RawConn.
func (st *stream) tryWrite(p []byte) int {
	if n, ok := writeNow(st.raw, p); ok {
		return n
	}
	var n int
	err := st.raw.Write(func(fd uintptr) bool {
		for len(p) > n {
			k, err := syscall.Write(int(fd), p[n:])
			if k <= 0 || err != nil {
				break
			}
			n += k
		}
		return true // never wait for writability: outLoop does
	})
	if err != nil {
		return 0
	}
	return n
}

// wrote counts n bytes taken by the local peer and returns credit in steps. Caller holds omu.
func (st *stream) wrote(n int) {
	st.delivered += n
	if st.delivered < st.window/creditSteps || st.peerFin { // after its fin the peer sends no more data
		return
	}
	owed := st.delivered + st.grow(time.Now(), st.delivered)
	st.delivered = 0
	m := st.m
	m.mu.Lock()
	st.owed += owed
	m.markReady(st)
	m.mu.Unlock()
	m.kick()
}

// grow doubles the stream's window, up to maxStreamWindow, when its local peer took half a
// window or more at more than half a window per WAN round trip: the sender then ran out of
// credit before the credit for it could come back, so the window, not the path, set the
// stream's rate. A stream slower than that, or on a link whose RTT is unknown, keeps its
// window. n bytes are being returned now; grow returns the credit it adds. Caller holds omu.
func (st *stream) grow(now time.Time, n int) int {
	if st.epoch.IsZero() { // the epoch starts with these bytes' return: they are not in it
		st.epoch = now
		return 0
	}
	st.epochN += n
	if st.epochN < st.window/2 {
		return 0
	}
	rtt, took, taken := st.m.roundTrip(), now.Sub(st.epoch), st.epochN
	st.epoch, st.epochN = now, 0
	// taken bytes in took at more than window/2 per rtt: took < 2·rtt·taken/window.
	if rtt <= 0 || st.window >= maxStreamWindow ||
		took.Seconds() >= 2*rtt.Seconds()*float64(taken)/float64(st.window) {
		return 0
	}
	added := min(st.window, maxStreamWindow-st.window)
	st.window += added
	st.m.t.c.windowGranted(st.window)
	return added
}

func (st *stream) signalOut() {
	select {
	case st.outSig <- struct{}{}:
	default:
	}
}

// deliverFin: the peer's local side ended; half-close ours once everything is written.
func (st *stream) deliverFin() {
	st.omu.Lock()
	st.peerFin = true
	st.omu.Unlock()
	st.signalOut()
}

// outLoop writes queued WAN data to the local peer (blocking) and half-closes it after
// the peer's fin. It returns when the receive half ends or the stream dies.
func (st *stream) outLoop() {
	for {
		select {
		case <-st.outSig:
		case <-st.done:
			return
		}
		st.omu.Lock()
		out := st.out
		st.out = nil
		st.flushing = true
		st.omu.Unlock()
		var werr error
		for _, b := range out {
			if werr == nil {
				if _, werr = st.conn.Write(*b); werr == nil {
					st.omu.Lock()
					st.outBytes -= len(*b)
					st.wrote(len(*b))
					st.omu.Unlock()
				}
			}
			bufPool.Put(b)
		}
		if werr != nil {
			st.abort(fmt.Errorf("write to local peer: %w", werr), true)
			return
		}
		st.omu.Lock()
		st.flushing = false
		closeNow := st.peerFin && len(st.out) == 0 && !st.closed
		if closeNow {
			st.closed = true
		} else if len(st.out) > 0 {
			st.signalOut()
		}
		st.omu.Unlock()
		if closeNow {
			if cw, ok := st.conn.(interface{ CloseWrite() error }); ok {
				cw.CloseWrite()
			}
			st.halfDone()
			return
		}
	}
}

// halfDone records one half ending cleanly; after both the stream is done.
func (st *stream) halfDone() {
	if st.halves.Add(1) == 2 {
		st.end(nil)
	}
}

// abort ends the stream with err: the local peer is reset, and when tell is set the other
// end gets a reset record.
func (st *stream) abort(err error, tell bool) {
	if st.dead.Swap(true) {
		return
	}
	m := st.m
	m.t.c.resets.Add(1)
	if tell {
		m.mu.Lock()
		st.reset = err.Error()
		m.markReady(st)
		m.mu.Unlock()
		m.kick()
	}
	st.omu.Lock()
	conn := st.conn
	for _, b := range st.out {
		bufPool.Put(b)
	}
	st.out, st.outBytes = nil, 0
	st.omu.Unlock()
	if lc, ok := conn.(interface{ SetLinger(int) error }); ok {
		lc.SetLinger(0) // a reset, so the client cannot take a cut stream for a clean end
	}
	st.end(err)
}

// end marks the stream done and releases it.
func (st *stream) end(err error) {
	st.doneOnce.Do(func() {
		st.dead.Store(true)
		st.err = err
		close(st.done)
		st.m.remove(st)
		st.omu.Lock()
		if st.conn != nil {
			st.conn.Close()
		}
		st.omu.Unlock()
	})
}
