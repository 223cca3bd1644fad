package tunnel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
)

// linkDialer holds the entry's mux links: up to Config.Links of them, each with its own
// relay thread at each end and its own zstd history per direction. A client goes to the
// link with the fewest clients; a new link is dialled only when every live one already has
// a client and fewer than Links are open, so one connection (a replication stream) keeps
// one link and its whole history, and concurrent clients get threads of their own: one
// relay thread serving two request/reply clients makes each wait for the other (at 2
// clients, ~0.7× a two-socat relay's queries per second with one link, socat's with two,
// docs/bench-tunnel.md). A failed link is dialled again for the next client.
type linkDialer struct {
	mu    sync.Mutex
	links []*muxLink
}

// muxLink returns a live link for one more client, dialling one if needed; the caller gives
// the client back with release. Concurrent first clients wait for the same dial instead of
// opening several links.
func (t *Tunnel) muxLink(ctx context.Context) (*muxLink, error) {
	t.links.mu.Lock()
	defer t.links.mu.Unlock()
	live := t.links.links[:0]
	for _, l := range t.links.links {
		if !l.failed() {
			live = append(live, l)
		}
	}
	clear(t.links.links[len(live):])
	t.links.links = live
	var least *muxLink
	for _, l := range live {
		if least == nil || l.clients < least.clients {
			least = l
		}
	}
	if least != nil && (least.clients == 0 || len(live) >= t.cfg.Links) {
		least.clients++
		return least, nil
	}
	hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	cpu := t.pickCPU() // here, where links open one at a time, in the order the exit sees them
	wan, sock, err := t.dialExit(hctx, muxPreface)
	if err != nil {
		cpu.release()
	}
	if err != nil && least != nil && ctx.Err() == nil {
		// A further link is a gain, not a need: the open ones still carry the client.
		t.log.Warn("tunnel mux link not opened; the client shares an open one", "err", err)
		least.clients++
		return least, nil
	}
	if err != nil {
		return nil, err
	}
	if !t.track(wan) {
		cpu.release()
		return nil, errors.New("tunnel is shutting down")
	}
	l := newMuxLink(t, wan, sock, cpu)
	l.clients = 1
	t.links.links = append(t.links.links, l)
	t.log.Info("tunnel mux link open", "to", t.cfg.To, "links", len(t.links.links))
	t.wg.Go(func() {
		l.run()
		t.untrack(wan)
	})
	return l, nil
}

// release gives back a client muxLink counted on l.
func (t *Tunnel) release(l *muxLink) {
	t.links.mu.Lock()
	l.clients--
	t.links.mu.Unlock()
}

// handleMuxEntry relays one client as a stream of the mux link.
func (t *Tunnel) handleMuxEntry(ctx context.Context, client net.Conn) {
	t.c.conns.Add(1)
	t.c.active.Add(1)
	defer t.c.active.Add(-1)
	log := t.log.With("conn", t.ids.Add(1), "peer", client.RemoteAddr().String())
	client = wrapSock(client)
	if !t.track(client) {
		return
	}
	defer t.untrack(client)
	var st *stream
	// A link can fail between get and open; one more dial covers that race.
	for try := 0; st == nil && try < 2; try++ {
		l, err := t.muxLink(ctx)
		if err != nil {
			if ctx.Err() == nil {
				t.c.failed.Add(1)
				log.Warn("tunnel connection refused", "err", err)
			}
			return
		}
		defer t.release(l)
		l.adopt(client)
		st = l.open(client)
	}
	if st == nil {
		t.c.failed.Add(1)
		log.Warn("tunnel connection refused: mux link failed twice")
		return
	}
	t.serveStream(st, log)
}

// serveMuxExit serves a mux link an entry opened, until it fails or closes.
func (t *Tunnel) serveMuxExit(wan, sock net.Conn, cpu *cpuPick) {
	l := newMuxLink(t, wan, sock, cpu)
	t.log.Info("tunnel mux link accepted", "peer", sock.RemoteAddr().String())
	l.run()
}

// serveExitStream dials the server for a stream the entry opened, then relays it.
func (t *Tunnel) serveExitStream(st *stream) {
	if t.draining.Load() {
		st.abort(errors.New("tunnel exit is stopping: no new connections"), true)
		return
	}
	t.c.conns.Add(1)
	t.c.active.Add(1)
	defer t.c.active.Add(-1)
	log := t.log.With("stream", st.id)
	ctx, cancel := context.WithTimeout(st.m.ctx, handshakeTimeout)
	conn, err := t.cfg.dial(ctx, "tcp", t.cfg.To)
	cancel()
	if err != nil {
		t.c.failed.Add(1)
		log.Warn("tunnel stream refused", "err", err)
		st.abort(fmt.Errorf("dial server %s: %w", t.cfg.To, err), true)
		return
	}
	conn = wrapSock(conn)
	st.m.adopt(conn)
	if !t.track(conn) {
		st.abort(errors.New("tunnel is shutting down"), false)
		return
	}
	defer t.untrack(conn)
	st.attach(conn)
	if st.dead.Load() { // aborted while dialling: attach came too late for end to close it
		conn.Close()
		return
	}
	t.serveStream(st, log)
}

// serveStream runs a stream's two halves until it ends, and counts how it ended.
func (t *Tunnel) serveStream(st *stream, log *slog.Logger) {
	t.wg.Go(st.outLoop)
	st.signalOut() // deliver may have queued bytes before the local peer was attached
	if !st.m.poll(st) {
		st.readLoop()
	}
	<-st.done
	switch {
	case st.err == nil:
		log.Debug("tunnel stream closed")
	case t.stopping():
	default:
		t.c.failed.Add(1)
		log.Warn("tunnel stream closed", "err", st.err)
	}
}

// adopt detaches conn for the link's relay loop, when the link has one and conn is a
// socket it can take over; otherwise conn stays on goroutines. Before the stream attaches it.
func (m *muxLink) adopt(conn net.Conn) {
	if sc, ok := conn.(*sockConn); ok && m.loop != nil {
		sc.detach() // on failure the stream reads on a goroutine
	}
}

// poll hands reading st's local peer to the relay loop; false when st reads on a goroutine.
func (m *muxLink) poll(st *stream) bool {
	sc, ok := st.conn.(*sockConn)
	if !ok || m.loop == nil || !sc.detached() {
		return false
	}
	if err := m.loop.add(st, sc); err != nil {
		st.abort(fmt.Errorf("relay loop: %w", err), true)
	}
	return true
}
