package tunnel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"
)

// muxPreface opens a mux link (same length as preface: the exit reads either).
const muxPreface = "WLMUX/1\n"

// A mux link carries every client connection of an entry over one WAN connection, each as
// a stream of records (mux_record.go) tagged with its id. Per direction one framer encodes
// the records of all streams into frames: one zstd stream with a long window, so bytes one
// connection repeats from another are sent as references.
//
//   - Fairness: streams with bytes to send wait in a round-robin ring; each turn takes at
//     most muxQuantum bytes of a stream into the frame (mux_sched.go), so a bulk result
//     cannot hold a point select's reply behind it for more than a frame.
//   - Flow control: a sender has streamWindow bytes of credit per stream; the receiver
//     returns credit as it writes the bytes to its local peer. A local peer that stops
//     reading stops its stream's credit, so only that stream waits: the WAN reader never
//     blocks on a local peer (mux_stream.go). A stream whose window, not the path, sets its
//     rate gets a larger one, up to maxStreamWindow (stream.grow). Credit never waits for
//     more bytes (holding).
//   - Integrity: every frame carries its CRC; a frame that fails it, a record that does not
//     parse, a credit overrun or a WAN that ends mid-frame closes the link with the error,
//     and every stream it carried is reset (its client sees a reset, not a clean end), with
//     nothing of the bad frame delivered. The entry dials a new link for the next client.
const (
	// streamWindow is the first credit of a stream: raw bytes in flight between the
	// sender's scheduler and the receiver's local peer. 512 KiB keeps a 20 Mbit × 200 ms
	// path busy for a single stream of incompressible bytes and bounds what a stalled
	// client makes the receiver hold.
	streamWindow = 512 << 10
	// maxStreamWindow bounds a stream's grown window: a binlog dump compressed 5-6× on a
	// full 2 Mbit/s link carries ~1.4 MB/s of raw bytes, ~0.35 MB per 250 ms round trip
	// and more with the path's queue; 8 MiB leaves room for a faster link and bounds what
	// a stream can make the receiver hold.
	maxStreamWindow = 8 << 20
	// creditSteps: the receiver returns a stream's credit in steps of a quarter of its
	// window, one record per step.
	creditSteps = 4
	// sendQueueLimit bounds what a stream's reader queues for the scheduler; beyond it the
	// reader stops reading its local peer, so TCP pushes back on it.
	sendQueueLimit = 64 << 10
	// muxQuantum is the most of one stream a frame takes per round-robin turn.
	muxQuantum = 16 << 10
)

// muxLink is one end of a mux link. Entry and exit run the same code; only the entry
// opens streams.
type muxLink struct {
	t    *Tunnel
	role Role
	wan  net.Conn // TLS or plain
	log  *slog.Logger
	cpu  *cpuPick // where the relay loop runs (nil: where the kernel puts it); freed by run

	mu      sync.Mutex
	streams map[uint32]*stream
	lastID  uint32 // entry: last id given out; exit: highest id opened by the entry
	ready   ring   // streams with something to send
	writing bool   // a goroutine holds the writer role (fr, batch)
	err     error  // why the link failed; set once
	done    chan struct{}
	ctx     context.Context // cancelled when the link fails (bounds the exit's dials)
	cancel  context.CancelFunc
	wake    chan struct{} // hands the writer role to the writer goroutine
	loop    *relayLoop    // moves the bytes on one thread; nil: on goroutines
	clients int           // entry: clients linkDialer gave this link and not yet back (under linkDialer.mu)

	fr      *framer // writer role only
	maxSize int
	batch   []byte

	roundTrip func() time.Duration // the WAN's smoothed RTT now, 0 unknown (stream.grow)

	wait      GroupWait   // how long ready bytes wait for more (mux_sched.go, holding)
	heldSince time.Time   // when the bytes waiting for the next frame began to wait (under mu)
	holdTimer *time.Timer // hands the writer role back when the wait ends (under mu)
}

func newMuxLink(t *Tunnel, wan, sock net.Conn, cpu *cpuPick) *muxLink {
	cfg := t.cfg
	var long int
	cfg.Window, long = windows(cfg.Window, true)
	m := &muxLink{
		t: t, role: cfg.Role, wan: wan, log: t.log.With("mux", wan.RemoteAddr().String()),
		streams: map[uint32]*stream{}, done: make(chan struct{}), wake: make(chan struct{}, 1),
		fr: newFramer(wan, cfg, &t.c), maxSize: cfg.GroupMaxSize, wait: cfg.GroupWait, cpu: cpu,
	}
	m.fr.enc.longWindow = long
	m.roundTrip = cfg.roundTrip
	if m.roundTrip == nil {
		m.roundTrip = func() time.Duration { return time.Duration(m.fr.srtt.Load()) }
	}
	m.loop = newRelayLoop(m, sock) // before the probe: it detaches the socket
	m.fr.probe = newWANProbe(sock, wanLowat(cfg.GroupMaxSize))
	m.fr.policy.probed = m.fr.probe != nil
	if cfg.Level == 0 && m.fr.probe != nil {
		m.fr.level, m.fr.cal, m.fr.log = newLevelPolicy(), newCalibrator(), m.log
		m.fr.policy.levelled = true
		m.fr.enc.setLevel(adaptLevels[0])
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	t.c.window.Store(int64(m.fr.enc.windowSize()))
	t.c.windowGranted(streamWindow)
	t.c.wans.Add(1)
	t.c.linksOpen.Add(1)
	return m
}

// run starts the writer goroutine and reads the WAN until the link fails or closes; then
// it resets every stream. The caller tracks wan for shutdown.
func (m *muxLink) run() {
	defer m.cpu.release()
	defer m.t.c.linksOpen.Add(-1)
	m.t.wg.Go(m.writer)
	err := m.receive()
	m.fail(err)
}

// fail closes the link once: the WAN closes, every stream is reset, nothing more is sent.
func (m *muxLink) fail(err error) {
	m.mu.Lock()
	if m.err != nil {
		m.mu.Unlock()
		return
	}
	if err == nil {
		err = errors.New("mux link closed")
	}
	m.err = err
	close(m.done)
	m.cancel()
	streams := make([]*stream, 0, len(m.streams))
	for _, st := range m.streams {
		streams = append(streams, st)
	}
	idle := !m.writing // else the writer releases the encoder (write)
	m.writing = true
	if m.holdTimer != nil {
		m.holdTimer.Stop()
	}
	m.mu.Unlock()
	m.wan.Close()
	if m.loop != nil {
		m.loop.wake()
	}
	if idle {
		m.fr.close()
	}
	shutdown := m.t.stopping()
	switch {
	case shutdown:
	case errors.Is(err, ErrCorrupt):
		m.t.c.corrupt.Add(1)
		m.log.Error("tunnel mux link closed: corrupt frame", "err", err, "streams", len(streams))
	default:
		m.log.Warn("tunnel mux link closed", "err", err, "streams", len(streams))
	}
	for _, st := range streams {
		st.abort(fmt.Errorf("mux link failed: %w", err), false)
	}
}

// failed reports whether the link can no longer carry streams.
func (m *muxLink) failed() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

// receive decodes frames and hands their records to the streams, until the WAN fails.
func (m *muxLink) receive() error {
	if m.loop != nil {
		return m.loop.run()
	}
	return m.t.eachFrame(m.wan, m.t.cfg.recvWindow(true), m.frame)
}

// frame applies one checked frame (wire bytes on the WAN): its records go to the streams.
// A frame whose records break the protocol fails its check, as one with a bad CRC does.
func (m *muxLink) frame(typ frameType, p []byte, wire int) error {
	if typ == frameEnd {
		m.t.c.faults.frameChecks.Add(1)
		return fmt.Errorf("%w: end frame on a mux link", ErrCorrupt)
	}
	data, err := m.dispatch(p)
	m.t.c.recv.frame(typ, data, wire)
	if errors.Is(err, ErrCorrupt) {
		m.t.c.faults.frameChecks.Add(1)
	}
	return err
}

// dispatch applies one frame's records and returns how many data bytes it carried. A
// binlog record that does not restore ends its stream, not the link: the frame passed its
// check, so the link's other streams and its zstd history are intact.
func (m *muxLink) dispatch(p []byte) (int, error) {
	data := 0
	for len(p) > 0 {
		r, rest, err := nextRecord(p)
		if err != nil {
			return data, err
		}
		p = rest
		if r.kind == recOpen {
			if err := m.accept(r.id); err != nil {
				return data, err
			}
			continue
		}
		st, err := m.lookup(r)
		if err != nil {
			return data, err
		}
		if st == nil {
			continue // a stream that ended here: its late records are moot
		}
		switch r.kind {
		case recData, recBinlog:
			data += len(r.payload)
			if err := st.deliverRecord(r.kind, r.payload); errors.Is(err, errBinlogEvent) {
				m.badEvent(st, err)
			} else if err != nil {
				return data, err
			}
		case recFin:
			if st.bdec != nil && st.bdec.pending() {
				m.badEvent(st, fmt.Errorf("%w: stream %d ended inside a packet", errBinlogEvent, st.id))
				continue
			}
			st.deliverFin()
		case recReset:
			st.abort(fmt.Errorf("reset by the other end: %s", r.payload), false)
		case recCredit:
			m.credit(st, int(r.n))
		}
	}
	return data, nil
}

// badEvent ends st, whose binlog records do not restore: its local peer is reset and the
// other end told.
func (m *muxLink) badEvent(st *stream, err error) {
	m.t.c.faults.binlogEvents.Add(1)
	st.abort(err, true)
}

// lookup finds the stream of a record; nil for one that already ended. An id never
// opened is a protocol error.
func (m *muxLink) lookup(r record) (*stream, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st := m.streams[r.id]; st != nil {
		return st, nil
	}
	if r.id == 0 || r.id > m.lastID {
		return nil, fmt.Errorf("%w: %s record for stream %d, never opened", ErrCorrupt, r.kind, r.id)
	}
	return nil, nil
}

// accept opens a stream the entry announced: the exit dials the server in the background,
// so a slow server never stalls the WAN reader.
func (m *muxLink) accept(id uint32) error {
	if m.role != Exit {
		return fmt.Errorf("%w: open record at the entry", ErrCorrupt)
	}
	m.mu.Lock()
	if id <= m.lastID {
		m.mu.Unlock()
		return fmt.Errorf("%w: stream %d opened again (last %d)", ErrCorrupt, id, m.lastID)
	}
	m.lastID = id
	st := newStream(m, id, nil)
	if m.t.cfg.Binlog == BinlogRecode {
		st.bin, st.watch = &binlogEncoder{}, &dumpWatch{}
	}
	m.streams[id] = st
	m.mu.Unlock()
	m.t.wg.Go(func() { m.t.serveExitStream(st) })
	return nil
}

// open registers a client connection as a new stream (entry) and sends its open record
// (a server speaks first: nothing may wait for the client); nil when the link failed.
func (m *muxLink) open(conn net.Conn) *stream {
	m.mu.Lock()
	if m.err != nil {
		m.mu.Unlock()
		return nil
	}
	m.lastID++
	st := newStream(m, m.lastID, conn)
	st.needOpen = true
	m.streams[st.id] = st
	m.markReady(st)
	m.mu.Unlock()
	m.kick()
	return st
}

// remove forgets an ended stream.
func (m *muxLink) remove(st *stream) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.streams[st.id] == st {
		delete(m.streams, st.id)
	}
	if m.loop != nil {
		m.loop.remove(st)
	}
}

// credit adds n bytes of credit from the peer.
func (m *muxLink) credit(st *stream, n int) {
	m.mu.Lock()
	st.credit += n
	st.noteStall()
	if st.sendable() {
		m.markReady(st)
	}
	m.mu.Unlock()
	m.kick()
}
