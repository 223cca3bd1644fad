package tunnel

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirelab/wirelab/internal/promserve"
)

// preface is the first thing an entry sends on a WAN connection (inside TLS when
// configured): it rejects a peer that is not a tunnel, or a plaintext one talking to TLS.
const preface = "WLTUN/1\n"

// handshakeTimeout bounds dialling, the TLS handshake and the preface, so a silent peer
// cannot hold a goroutine.
const handshakeTimeout = 10 * time.Second

// Tunnel is one end of the WAN channel: New listens, Serve relays until its context ends.
type Tunnel struct {
	cfg   Config
	ln    net.Listener
	log   *slog.Logger
	c     counters
	wg    sync.WaitGroup
	ids   atomic.Uint64
	mu    sync.Mutex
	open  map[net.Conn]struct{}
	shut  bool
	rpool sync.Pool  // *bufio.Reader for the WAN side
	links linkDialer // the entry's mux links (mux_ends.go)
	// waitUnused says once that the exit's --group-wait does not apply: an entry chose one
	// WAN connection per client (--mux off), whose frames are not held.
	waitUnused sync.Once
	tls        atomic.Pointer[tls.Config] // what new WAN connections use; ReloadTLS swaps it
	draining   atomic.Bool                // Drain closed the listener: Serve waits for its context
	metrics    *promserve.Server          // nil without Config.MetricsListen
}

// New validates cfg, reads its TLS files and listens on cfg.Listen (and MetricsListen).
func New(cfg Config) (*Tunnel, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	if cfg.TLS, err = cfg.loadTLS(); err != nil {
		return nil, err
	}
	if cfg.dial == nil {
		d := &net.Dialer{Timeout: handshakeTimeout}
		cfg.dial = d.DialContext
	}
	t := &Tunnel{cfg: cfg, open: map[net.Conn]struct{}{},
		log: cfg.Logger.With("component", "tunnel", "role", string(cfg.Role))}
	t.tls.Store(cfg.TLS)
	if cfg.TLS == nil {
		t.log.Warn("tunnel without TLS: the WAN side is plaintext and unauthenticated")
	}
	if t.ln, err = net.Listen("tcp", cfg.Listen); err != nil {
		return nil, fmt.Errorf("tunnel %s: listen on %s: %w", cfg.Role, cfg.Listen, err)
	}
	if cfg.MetricsListen != "" {
		if t.metrics, err = promserve.Listen(cfg.MetricsListen, t.MetricsHandler()); err != nil {
			t.ln.Close()
			return nil, fmt.Errorf("tunnel %s: %w", cfg.Role, err)
		}
	}
	t.rpool.New = func() any { return bufio.NewReaderSize(nil, 64<<10) }
	return t, nil
}

// Addr is the listening address (useful with port 0).
func (t *Tunnel) Addr() net.Addr { return t.ln.Addr() }

// Stats is a snapshot of the counters.
func (t *Tunnel) Stats() Stats { return t.c.snapshot(t.cfg.Role) }

// Serve accepts and relays connections until ctx is done; then it closes the listener and
// every connection, waits for all goroutines and returns nil. It returns an error when
// accepting fails for another reason.
func (t *Tunnel) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, t.shutdown)
	defer stop()
	t.log.Info("tunnel listening", "listen", t.ln.Addr().String(), "to", t.cfg.To,
		"compress", string(t.cfg.Compress), "tls", t.cfg.TLS != nil)
	if t.cfg.PrintStats {
		t.wg.Go(func() { t.statsLoop(ctx) })
	}
	if t.metrics != nil {
		t.wg.Go(func() { t.metrics.Serve(ctx, t.log, "tunnel metrics") })
	}
	var err error
	for {
		conn, aerr := t.ln.Accept()
		if aerr != nil {
			if t.draining.Load() {
				<-ctx.Done() // open connections run on until the drain ends
			}
			if ctx.Err() != nil {
				break
			}
			var ne net.Error
			if errors.As(aerr, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			err = fmt.Errorf("tunnel %s: accept on %s: %w", t.cfg.Role, t.ln.Addr(), aerr)
			break
		}
		var cpu *cpuPick
		if t.cfg.Role == Exit {
			cpu = t.pickCPU() // in accept order: the order the entry dialled its links
		}
		t.wg.Go(func() { t.handle(ctx, conn, cpu) })
	}
	cancel()
	t.shutdown()
	t.wg.Wait()
	return err
}

func (t *Tunnel) shutdown() {
	t.ln.Close()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.shut = true
	for c := range t.open {
		c.Close()
	}
}

// track registers conns for shutdown; false (and closed) when shutdown already started.
func (t *Tunnel) track(conns ...net.Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range conns {
		if t.shut {
			c.Close()
			continue
		}
		t.open[c] = struct{}{}
	}
	return !t.shut
}

// stopping reports whether Serve is shutting the tunnel down.
func (t *Tunnel) stopping() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.shut
}

func (t *Tunnel) untrack(conns ...net.Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range conns {
		delete(t.open, c)
		c.Close()
	}
}

func (t *Tunnel) statsLoop(ctx context.Context) {
	tk := time.NewTicker(t.cfg.StatsEvery)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(t.cfg.StatsOut, t.Stats().String())
			return
		case <-tk.C:
			fmt.Fprintln(t.cfg.StatsOut, t.Stats().String())
		}
	}
}

// handle relays one accepted connection: a client at the entry (over its own WAN
// connection, or as a stream of the mux link), a WAN connection at the exit (one client's,
// or a mux link carrying many). At an exit, cpu is the CPU picked for the connection should
// it open a mux link (given back otherwise).
func (t *Tunnel) handle(ctx context.Context, accepted net.Conn, cpu *cpuPick) {
	if t.cfg.Role == Entry && t.cfg.Mux == MuxOn {
		t.handleMuxEntry(ctx, accepted)
		return
	}
	if t.cfg.Role == Exit {
		accepted = wrapSock(accepted) // a mux link's relay loop may take the WAN socket over
	}
	if !t.track(accepted) {
		cpu.release()
		return
	}
	plain, wan, sock, mux, err := t.connect(ctx, accepted)
	if mux {
		t.serveMuxExit(wan, sock, cpu)
		t.untrack(accepted)
		return
	}
	cpu.release() // not a mux link
	t.c.conns.Add(1)
	t.c.active.Add(1)
	defer t.c.active.Add(-1)
	log := t.log.With("conn", t.ids.Add(1), "peer", accepted.RemoteAddr().String())
	if err != nil {
		t.untrack(accepted)
		if ctx.Err() == nil {
			t.c.failed.Add(1)
			log.Warn("tunnel connection refused", "err", err)
		}
		return
	}
	if !t.track(plain, wan) {
		t.untrack(plain, wan)
		return
	}
	defer t.untrack(plain, wan)
	log.Debug("tunnel connection open")
	t.relay(ctx, plain, wan, sock, log)
}

// relay runs both directions of one client's WAN connection until they end, and counts
// how the connection ended.
func (t *Tunnel) relay(ctx context.Context, plain, wan, sock net.Conn, log *slog.Logger) {
	errc := make(chan error, 2)
	s := newSender(plain, wan, t.cfg, &t.c)
	if t.cfg.Compress == Auto {
		s.probe = newWANProbe(sock, wanLowat(t.cfg.GroupMaxSize))
		s.policy.probed = s.probe != nil
	}
	t.wg.Go(func() { errc <- s.run(&t.wg) })
	t.wg.Go(func() { errc <- t.receive(wan, plain) })
	first := <-errc
	if first != nil {
		// Closing both ends unblocks the other direction: the local peer sees the
		// connection reset (not a clean end it could take for the whole stream) instead
		// of hanging on a dead WAN.
		if tc, ok := plain.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		t.c.resets.Add(1)
		plain.Close()
		wan.Close()
	}
	second := <-errc
	if first == nil {
		first = second
	}
	switch {
	case first == nil:
		log.Debug("tunnel connection closed")
	case ctx.Err() != nil:
	case errors.Is(first, ErrCorrupt):
		t.c.failed.Add(1)
		t.c.corrupt.Add(1)
		log.Error("tunnel connection closed: corrupt frame", "err", first)
	default:
		t.c.failed.Add(1)
		log.Warn("tunnel connection closed", "err", first)
	}
}

// connect returns the plain and WAN sides for an accepted connection, and the WAN side's
// socket under any TLS (for the auto policy's TCP_INFO probe). At the exit, mux reports a
// mux link (wan and sock set, nothing dialled).
func (t *Tunnel) connect(ctx context.Context, accepted net.Conn) (plain, wan, sock net.Conn, mux bool, err error) {
	hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	if t.cfg.Role == Entry {
		wan, sock, err = t.dialExit(hctx, preface)
		return accepted, wan, sock, false, err
	}
	if wan, mux, err = t.acceptEntry(hctx, accepted); err != nil || mux {
		return nil, wan, accepted, mux, err
	}
	if !t.cfg.GroupWait.IsZero() {
		t.waitUnused.Do(func() {
			t.log.Warn("an entry connected without --mux on: this exit's --group-wait holds only mux links' frames, not its connections'",
				"group_wait", t.cfg.GroupWait.String())
		})
	}
	plain, err = t.cfg.dial(hctx, "tcp", t.cfg.To)
	if err != nil {
		wan.Close()
		return nil, nil, nil, false, fmt.Errorf("dial server %s: %w", t.cfg.To, err)
	}
	return plain, wan, accepted, false, nil
}

// dialExit connects to the exit and announces what follows: preface (one client's
// connection) or muxPreface (a mux link).
func (t *Tunnel) dialExit(ctx context.Context, hello string) (wan, sock net.Conn, err error) {
	conn, err := t.cfg.dial(ctx, "tcp", t.cfg.To)
	if err != nil {
		return nil, nil, fmt.Errorf("dial tunnel exit %s: %w", t.cfg.To, err)
	}
	if hello == muxPreface {
		conn = wrapSock(conn) // the link's relay loop may take the socket over
		if t.cfg.TLS != nil && !t.cfg.Switches.TLSRecords {
			hello = muxRecordsPreface // the link leaves TLS's records after the preface
		}
	}
	sock = conn
	var tc *tls.Conn
	var bound *tlsBound
	if cfg := t.tls.Load(); cfg != nil {
		if hello == muxRecordsPreface {
			bound = newTLSBound(conn)
			tc = tls.Client(bound, cfg)
		} else {
			tc = tls.Client(conn, cfg)
		}
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			t.c.tlsRefused.Add(1)
			return nil, nil, fmt.Errorf("tls handshake with tunnel exit %s: %w", t.cfg.To, err)
		}
		conn = tc
	}
	if _, err := io.WriteString(conn, hello); err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("send preface to tunnel exit %s: %w", t.cfg.To, err)
	}
	if bound != nil {
		if conn, err = t.recordConn(sock, tc, bound, true); err != nil {
			sock.Close()
			return nil, nil, fmt.Errorf("mux records with tunnel exit %s: %w", t.cfg.To, err)
		}
	}
	return conn, sock, nil
}

// acceptEntry runs TLS and reads the preface; mux reports a mux link.
func (t *Tunnel) acceptEntry(ctx context.Context, conn net.Conn) (wan net.Conn, mux bool, err error) {
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
		defer conn.SetDeadline(time.Time{})
	}
	sock := conn
	var tc *tls.Conn
	var bound *tlsBound
	if cfg := t.tls.Load(); cfg != nil {
		bound = newTLSBound(conn)
		tc = tls.Server(bound, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			t.c.tlsRefused.Add(1)
			return nil, false, fmt.Errorf("tls handshake with entry: %w", err)
		}
		conn = tc
	}
	var got [len(preface)]byte
	if _, err := io.ReadFull(conn, got[:]); err != nil {
		return nil, false, fmt.Errorf("read preface from entry: %w", err)
	}
	switch string(got[:]) {
	case preface, muxPreface:
		if bound != nil {
			bound.pass = true // the connection stays with crypto/tls
		}
		return conn, string(got[:]) == muxPreface, nil
	case muxRecordsPreface:
		if bound == nil {
			return nil, false, fmt.Errorf("read preface from entry: got %q, a mux link in its own records, but this exit has no TLS", got[:])
		}
		if conn, err = t.recordConn(sock, tc, bound, false); err != nil {
			return nil, false, fmt.Errorf("mux records with entry: %w", err)
		}
		return conn, true, nil
	}
	return nil, false, fmt.Errorf("read preface from entry: got %q, want %q, %q or %q (a plaintext or foreign peer?)", got[:], preface, muxPreface, muxRecordsPreface)
}

// recordConn takes sock over from the TLS connection tc, whose handshake and preface are
// done, for a mux link in its own records (records.go); entry says which end this is.
func (t *Tunnel) recordConn(sock net.Conn, tc *tls.Conn, bound *tlsBound, entry bool) (net.Conn, error) {
	rest, err := bound.rest()
	if err != nil {
		return nil, err
	}
	c, err := newRecordConn(sock, exporterKeys(tc.ConnectionState()), entry, rest)
	if err != nil {
		return nil, err
	}
	c.fails = &t.c.faults.recordTags
	return c, nil
}

// errStop ends eachFrame without an error.
var errStop = errors.New("stop")

// eachFrame decodes checked frames from the WAN and calls fn with each one's type, raw bytes
// (valid until fn returns) and size on the wire, until fn returns an error (errStop: nil) or
// reading fails. A WAN that ends between frames is an error too: every layout ends with a
// frame of its own first. A zstd stream may declare a window of up to maxWindow bytes.
func (t *Tunnel) eachFrame(wan io.Reader, maxWindow int, fn func(typ frameType, p []byte, wire int) error) error {
	br := t.rpool.Get().(*bufio.Reader)
	br.Reset(wan)
	defer func() { br.Reset(nil); t.rpool.Put(br) }()
	d := newFrameDecoder(br, maxWindow)
	d.fails = &t.c.faults.frameChecks
	defer d.close()
	for {
		typ, p, err := d.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return errors.New("wan closed without an end frame")
			}
			return fmt.Errorf("read frame from wan: %w", err)
		}
		if err := fn(typ, p, headerLen+int(d.wireLen())); err != nil {
			if err == errStop {
				return nil
			}
			return err
		}
	}
}

// receive decodes frames from the WAN and writes them to the local peer. An end frame
// half-closes the local peer and returns nil; anything else unexpected is an error.
func (t *Tunnel) receive(wan io.Reader, plain net.Conn) error {
	return t.eachFrame(wan, t.cfg.recvWindow(false), func(typ frameType, p []byte, wire int) error {
		t.c.recv.frame(typ, len(p), wire)
		if typ == frameEnd {
			if cw, ok := plain.(interface{ CloseWrite() error }); ok {
				if err := cw.CloseWrite(); err != nil {
					return err
				}
				return errStop
			}
			plain.Close()
			return errStop
		}
		if _, err := plain.Write(p); err != nil {
			return fmt.Errorf("write to local peer: %w", err)
		}
		return nil
	})
}
