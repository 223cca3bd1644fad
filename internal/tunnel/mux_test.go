package tunnel

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// roleServer serves each connection by its first line: "echo" echoes; "sink" counts what
// it reads into sunk; "bulk" writes data and then echoes.
func roleServer(t *testing.T, data []byte, sunk *atomic.Int64) string {
	return serveTCP(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		switch strings.TrimSpace(line) {
		case "sink":
			buf := make([]byte, 32<<10)
			for {
				n, err := br.Read(buf)
				sunk.Add(int64(n))
				if err != nil {
					return
				}
			}
		case "bulk":
			if _, err := c.Write(data); err != nil {
				return
			}
		}
		io.Copy(c, br)
	})
}

// pingPong does n request/echo round trips on c and returns the first error.
func pingPong(c net.Conn, n int) error {
	req := query("SELECT c FROM sbtest1 WHERE id=42")
	buf := make([]byte, len(req))
	for range n {
		if _, err := c.Write(req); err != nil {
			return err
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			return err
		}
		if !bytes.Equal(buf, req) {
			return io.ErrUnexpectedEOF
		}
	}
	return nil
}

func dialRole(t *testing.T, addr, role string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, role+"\n"); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTunnelFlowControl: a client that stops reading a large result blocks only its own
// connection: another client's round trips go through meanwhile, and the stalled client
// later receives every byte, in order.
func TestTunnelFlowControl(t *testing.T) { bothMux(t, testTunnelFlowControl) }

func testTunnelFlowControl(t *testing.T, mux MuxMode) {
	r := rand.New(rand.NewPCG(7, 8))
	data := concat(binlogTraffic(r, newTable(r, 1000), 20000)) // ~10 MB: more than every buffer on the way
	entry, exit := pair(t, roleServer(t, data, nil), Auto, mux, nil, nil)
	stalled := dialRole(t, entry.Addr().String(), "bulk")
	// Let the bulk reply fill every buffer up to the stalled client.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if exit.Stats().Send.RawBytes >= 1<<20 {
			break
		}
	}
	other := dialRole(t, entry.Addr().String(), "echo")
	if err := pingPong(other, 50); err != nil {
		t.Fatalf("round trips of another client while one stalls: %v", err)
	}
	if sent := exit.Stats().Send.RawBytes; sent >= int64(len(data)) {
		t.Fatalf("the exit sent all %d bytes to a client that reads nothing: no flow control", sent)
	}
	got := make([]byte, len(data))
	if _, err := io.ReadFull(stalled, got); err != nil {
		t.Fatalf("stalled client resuming: %v", err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("stalled client got different bytes")
	}
}

// TestTunnelFairness: over a slow WAN, a client uploading a bulk stream does not hold
// another client's small requests behind it: their round trips finish while most of the
// upload is still to come.
func TestTunnelFairness(t *testing.T) { bothMux(t, testTunnelFairness) }

func testTunnelFairness(t *testing.T, mux MuxMode) {
	const bulk = 16 << 20
	var sunk atomic.Int64
	exit := startTunnel(t, Config{Role: Exit, To: roleServer(t, nil, &sunk), Compress: Off, Mux: mux})
	entry := startTunnel(t, Config{Role: Entry, To: exit.Addr().String(), Compress: Off, Mux: mux,
		dial: slowDial(16e6)}) // 16 MB/s entry → exit: the upload takes ~1 s
	up := dialRole(t, entry.Addr().String(), "sink")
	var wg sync.WaitGroup
	wg.Go(func() {
		chunk := bytes.Repeat([]byte("bulk-row-"), 64<<10/9)
		for sent := 0; sent < bulk; sent += len(chunk) {
			if _, err := up.Write(chunk); err != nil {
				return
			}
		}
	})
	defer wg.Wait()
	defer up.Close()
	for sunk.Load() < 256<<10 {
		time.Sleep(time.Millisecond)
	}
	other := dialRole(t, entry.Addr().String(), "echo")
	if err := pingPong(other, 20); err != nil {
		t.Fatal(err)
	}
	if done := sunk.Load(); done > bulk/2 {
		t.Fatalf("20 round trips waited for %d of the bulk's %d bytes: the bulk stream starved them", done, bulk)
	}
}

// queueBytes puts n bytes on st's send queue as its reader would.
func queueBytes(m *muxLink, st *stream, n int) {
	for n > 0 {
		b := bufPool.Get().(*[]byte)
		k := min(n, cap(*b))
		*b = (*b)[:k]
		st.chunks = append(st.chunks, piece{b, recData})
		st.queued += k
		n -= k
	}
	m.markReady(st)
}

// frameShares collects one frame and returns the data bytes of each stream in it, and the
// record kinds in order.
func frameShares(t *testing.T, m *muxLink) (map[uint32]int, []recKind) {
	t.Helper()
	batch, _, _ := m.collect()
	shares, kinds := map[uint32]int{}, []recKind(nil)
	for p := batch; len(p) > 0; {
		r, rest, err := nextRecord(p)
		if err != nil {
			t.Fatal(err)
		}
		shares[r.id] += len(r.payload)
		kinds = append(kinds, r.kind)
		p = rest
	}
	return shares, kinds
}

// TestMuxScheduler: a small reply queued behind a bulk one goes out in the very next frame
// (round robin, muxQuantum per turn); a stream without credit sends nothing until credit
// comes; a fin follows the stream's last byte.
func TestMuxScheduler(t *testing.T) {
	m := &muxLink{t: &Tunnel{}, maxSize: DefaultGroupMaxSize, wake: make(chan struct{}, 1)}
	bulk, small := newStream(m, 1, nil), newStream(m, 2, nil)
	queueBytes(m, bulk, streamWindow+100<<10)
	queueBytes(m, small, 120)
	shares, _ := frameShares(t, m)
	if shares[2] != 120 {
		t.Fatalf("first frame: small %d bytes (want all 120), bulk %d", shares[2], shares[1])
	}

	// Credit: the bulk stream may send streamWindow bytes, then nothing until credit.
	sent := shares[1]
	for range 100 {
		s, _ := frameShares(t, m)
		if s[1] == 0 {
			break
		}
		sent += s[1]
	}
	if sent != streamWindow {
		t.Fatalf("bulk sent %d bytes without credit, want its window %d", sent, streamWindow)
	}
	if n := m.t.c.creditStalls.Load(); n != 1 {
		t.Fatalf("credit stalls %d after the bulk stream ran out, want 1", n)
	}
	m.credit(bulk, 1000)
	if s, _ := frameShares(t, m); s[1] != 1000 {
		t.Fatalf("after 1000 bytes of credit the bulk stream sent %d", s[1])
	}
	if n := m.t.c.creditStalls.Load(); n != 2 {
		t.Fatalf("credit stalls %d after the bulk stream ran out again, want 2", n)
	}

	small.fin = true
	queueBytes(m, small, 10)
	if _, kinds := frameShares(t, m); len(kinds) != 2 || kinds[0] != recData || kinds[1] != recFin {
		t.Fatalf("records %v, want data then fin", kinds)
	}
}

// TestStreamWindowGrows: a stream's receiver doubles the window when it took half a window
// or more at more than half a window per round trip (the sender was waiting for credit),
// up to maxStreamWindow, and returns what it adds as credit; a slower stream, or one on a
// link whose RTT is unknown, keeps its window.
func TestStreamWindowGrows(t *testing.T) {
	const rtt = 250 * time.Millisecond
	for _, c := range []struct {
		name string
		rtt  time.Duration
		gap  time.Duration // between credit steps (a quarter of the window each)
		want int
	}{
		{"window/2.5 per rtt", rtt, rtt * 2 / 5, maxStreamWindow},
		{"window/1.67 per rtt", rtt, rtt * 3 / 5, streamWindow},
		{"rtt unknown", 0, time.Millisecond, streamWindow},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &muxLink{t: &Tunnel{}, roundTrip: func() time.Duration { return c.rtt }}
			st := newStream(m, 1, nil)
			now, added := time.Unix(1e9, 0), 0
			for range 100 {
				added += st.grow(now, st.window/creditSteps)
				now = now.Add(c.gap)
			}
			if st.window != c.want || added != c.want-streamWindow {
				t.Fatalf("window %d, credit added %d; want %d, %d", st.window, added, c.want, c.want-streamWindow)
			}
		})
	}
}

// TestGroupWaitNeverHoldsCredit: a group wait holds a stream's data for more, but not the
// credit the other end's sender may be waiting for.
func TestGroupWaitNeverHoldsCredit(t *testing.T) {
	m := &muxLink{t: &Tunnel{}, maxSize: DefaultGroupMaxSize, wake: make(chan struct{}, 1), fr: &framer{},
		wait: GroupWait{D: time.Second}}
	st := newStream(m, 1, nil)
	queueBytes(m, st, 100)
	if !m.holding(time.Now()) {
		t.Fatal("100 bytes of data not held for a 1s group wait")
	}
	m.holdTimer.Stop()
	st.owed = 1000
	if m.holding(time.Now()) {
		t.Fatal("credit held for the group wait")
	}
}

// TestMuxStreamWindowGrowsEndToEnd: where the window is the limit (the entry sees a 1 s
// RTT), the entry grows a bulk reply's window to maxStreamWindow, the exit uses the credit
// and every byte arrives, none refused as past the stream's credit.
func TestMuxStreamWindowGrowsEndToEnd(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	data := concat(binlogTraffic(r, newTable(r, 1000), 20000)) // ~10 MB: room to grow four times
	exit := startTunnel(t, Config{Role: Exit, To: streamer(t, data), Compress: Zstd, Mux: MuxOn})
	entry := startTunnel(t, Config{Role: Entry, To: exit.Addr().String(), Compress: Zstd, Mux: MuxOn,
		roundTrip: func() time.Duration { return time.Second }})
	conn, err := net.Dial("tcp", entry.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	got, err := readData(conn, len(data))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %d of %d bytes (equal %v): %v", len(got), len(data), bytes.Equal(got, data[:len(got)]), err)
	}
	if w := entry.Stats().Mux.StreamWindow; w != maxStreamWindow {
		t.Errorf("entry's largest stream window %d, want %d", w, maxStreamWindow)
	}
	if c := exit.Stats().Corrupt + entry.Stats().Corrupt; c != 0 {
		t.Errorf("%d links failed as corrupt", c)
	}
}

// TestMuxSchedulerFullFrame: when a frame has less room left than a record header, the
// frame is done; other streams' bytes wait for the next one.
func TestMuxSchedulerFullFrame(t *testing.T) {
	m := &muxLink{t: &Tunnel{}, maxSize: 1000, wake: make(chan struct{}, 1)}
	first, second := newStream(m, 1, nil), newStream(m, 2, nil)
	queueBytes(m, first, 1000-recHeaderLen-5) // leaves 5 bytes: less than a record header
	queueBytes(m, second, 100)
	done := make(chan map[uint32]int, 1)
	go func() { s, _ := frameShares(t, m); done <- s }()
	select {
	case s := <-done:
		if s[1] != 1000-recHeaderLen-5 || s[2] != 0 {
			t.Fatalf("first frame shares %v", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("collect did not return with a nearly full frame")
	}
	if s, _ := frameShares(t, m); s[2] != 100 {
		t.Fatalf("second frame shares %v, want the second stream's 100 bytes", s)
	}
}

// linkClients is the entry's mux links' client counts, in the order the links opened.
func linkClients(entry *running) []int {
	entry.links.mu.Lock()
	defer entry.links.mu.Unlock()
	var n []int
	for _, l := range entry.links.links {
		n = append(n, l.clients)
	}
	return n
}

// TestMuxLinksAClientEachUpToLinks: an entry opens a new mux link only while every open
// one has a client, up to Links; later clients go to the link with the fewest, and a
// client that leaves is given back. Every client's round trips come back whole.
func TestMuxLinksAClientEachUpToLinks(t *testing.T) {
	exit := startTunnel(t, Config{Role: Exit, To: echoServer(t), Compress: Auto, Mux: MuxOn})
	entry := startTunnel(t, Config{Role: Entry, To: exit.Addr().String(), Compress: Auto, Mux: MuxOn, Links: 2})
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", entry.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(20 * time.Second))
		if err := pingPong(c, 20); err != nil { // the stream is open once a reply came back
			t.Fatal(err)
		}
		return c
	}
	want := func(want ...int) {
		t.Helper()
		if got := linkClients(entry); !slices.Equal(got, want) {
			t.Fatalf("links' clients = %v, want %v", got, want)
		}
	}
	a := dial()
	want(1)
	b := dial()
	want(1, 1)
	c := dial()
	want(2, 1)
	a.Close()
	b.Close()
	deadline := time.Now().Add(5 * time.Second)
	for !slices.Equal(linkClients(entry), []int{1, 0}) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	want(1, 0)
	d := dial()
	want(1, 1) // the idle link, not a third one
	for _, cl := range []net.Conn{c, d} {
		if err := pingPong(cl, 20); err != nil {
			t.Fatal(err)
		}
		cl.Close()
	}
}

// TestMuxLinksOneClientOneLink: one client keeps one link, and so the whole zstd history,
// however many links the entry may open.
func TestMuxLinksOneClientOneLink(t *testing.T) {
	exit := startTunnel(t, Config{Role: Exit, To: echoServer(t), Compress: Auto, Mux: MuxOn})
	entry := startTunnel(t, Config{Role: Entry, To: exit.Addr().String(), Compress: Auto, Mux: MuxOn, Links: 8})
	for range 3 { // one after the other
		c, err := net.Dial("tcp", entry.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(20 * time.Second))
		if err := pingPong(c, 20); err != nil {
			t.Fatal(err)
		}
		c.Close()
		deadline := time.Now().Add(5 * time.Second)
		for !slices.Equal(linkClients(entry), []int{0}) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if got := linkClients(entry); !slices.Equal(got, []int{0}) {
		t.Errorf("links' clients after three clients one at a time = %v, want one link, [0]", got)
	}
}

// TestMuxLinksADialThatFailsSharesAnOpenLink: when a further link cannot be dialled, the
// client goes to an open link instead of being refused.
func TestMuxLinksADialThatFailsSharesAnOpenLink(t *testing.T) {
	exit := startTunnel(t, Config{Role: Exit, To: echoServer(t), Compress: Auto, Mux: MuxOn})
	var dials atomic.Int32
	entry := startTunnel(t, Config{Role: Entry, To: exit.Addr().String(), Compress: Auto, Mux: MuxOn, Links: 2,
		dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dials.Add(1) > 1 {
				return nil, errors.New("refused for the test")
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}})
	var conns []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", entry.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		if err := pingPong(c, 20); err != nil {
			t.Fatalf("client %d: %v", len(conns), err)
		}
		conns = append(conns, c)
	}
	if got := linkClients(entry); !slices.Equal(got, []int{2}) {
		t.Errorf("links' clients = %v, want both clients on the one link that opened, [2]", got)
	}
	if s := entry.Stats(); s.Failed != 0 {
		t.Errorf("entry counted %d failed clients, want 0", s.Failed)
	}
}

// TestMuxGroupWait: with a group wait the chunks a one-way stream sends within it leave in
// one frame, after the wait; without it each chunk is a frame of its own.
func TestMuxGroupWait(t *testing.T) {
	const chunks, size, gap = 10, 1000, 20 * time.Millisecond
	server := serveTCP(t, func(c net.Conn) {
		p := bytes.Repeat([]byte("binlog row "), size/10)[:size]
		for range chunks {
			if _, err := c.Write(p); err != nil {
				return
			}
			time.Sleep(gap)
		}
		io.Copy(io.Discard, c) // the stream stays open: no fin ends the wait
	})
	for _, c := range []struct {
		wait       time.Duration
		minFrames  int64
		maxFrames  int64
		firstAfter time.Duration
	}{
		{0, chunks - 2, chunks, 0},
		{400 * time.Millisecond, 1, 1, 350 * time.Millisecond},
	} {
		t.Run(c.wait.String(), func(t *testing.T) {
			exit := startTunnel(t, Config{Role: Exit, To: server, Compress: Zstd, Mux: MuxOn, GroupWait: GroupWait{D: c.wait}})
			entry := startTunnel(t, Config{Role: Entry, To: exit.Addr().String(), Compress: Zstd, Mux: MuxOn})
			conn, err := net.Dial("tcp", entry.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			start := time.Now()
			buf := make([]byte, chunks*size)
			n, err := conn.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			first := time.Since(start)
			if _, err := io.ReadFull(conn, buf[n:]); err != nil {
				t.Fatalf("after %d bytes: %v", n, err)
			}
			// The exit counts a frame after its write returns, which the client's read
			// can overtake.
			st := exit.Stats()
			for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline) &&
				(st.Send.Groups() < c.minFrames || c.wait > 0 && st.Flush.Timeout < st.Send.Groups()); {
				time.Sleep(time.Millisecond)
				st = exit.Stats()
			}
			frames := st.Send.Groups()
			if frames < c.minFrames || frames > c.maxFrames {
				t.Errorf("%d chunks %v apart left in %d frames, want %d..%d", chunks, gap, frames, c.minFrames, c.maxFrames)
			}
			if first < c.firstAfter {
				t.Errorf("first bytes after %v, want at least %v (the wait)", first, c.firstAfter)
			}
			if c.wait > 0 && st.Flush.Timeout != frames {
				t.Errorf("flush timeout=%d of %d frames, want every frame counted as waited", st.Flush.Timeout, frames)
			}
		})
	}
}

// TestGroupWaitUnusedWarns: an exit's --group-wait holds only mux links' frames, so an
// entry that connects with --mux off is told of once in the exit's log, and a mux entry
// is not.
func TestGroupWaitUnusedWarns(t *testing.T) {
	const warning = "holds only mux links' frames"
	for _, c := range []struct {
		mux  MuxMode
		want int
	}{{MuxOff, 1}, {MuxOn, 0}} {
		t.Run(string(c.mux), func(t *testing.T) {
			var log bytes.Buffer // read once both ends have stopped (Serve waits for its connections)
			exit := startTunnel(t, Config{Role: Exit, To: echoServer(t), Compress: Zstd, GroupWait: GroupWait{D: 20 * time.Millisecond},
				Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))})
			entry := startTunnel(t, Config{Role: Entry, To: exit.Addr().String(), Compress: Zstd, Mux: c.mux})
			for i := range 3 {
				data := bytes.Repeat([]byte{'a' + byte(i)}, 1000)
				if got := exchange(t, entry.Addr().String(), data); !bytes.Equal(got, data) {
					t.Fatalf("connection %d: echo differs", i)
				}
			}
			entry.stop()
			exit.stop()
			if got := strings.Count(log.String(), warning); got != c.want {
				t.Errorf("--mux %s: %d warnings %q in the exit's log, want %d:\n%s", c.mux, got, warning, c.want, log.String())
			}
		})
	}
}
