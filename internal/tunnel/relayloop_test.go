//go:build linux

package tunnel

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/nstest"
)

// TestRelayLoop: on Linux a mux link over TCP moves its bytes on the relay loop, with and
// without TLS, and carries concurrent bulk echoes (both directions at once, so the WAN
// socket fills and frames wait for room) intact and in order; Switches.GoroutineLinks
// (WIRELAB_TUNNEL_LOOP=off) runs the same link on goroutines.
func TestRelayLoop(t *testing.T) {
	entryTLS, exitTLS, _ := testCerts(t)
	for _, tc := range []struct {
		name     string
		tls      bool
		loopOff  bool
		wantLoop bool
	}{
		{"plain", false, false, true},
		{"tls", true, false, true},
		{"loop off", true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var etls, xtls = entryTLS, exitTLS
			if !tc.tls {
				etls, xtls = nil, nil
			}
			sw := Switches{GoroutineLinks: tc.loopOff}
			exit := startTunnel(t, Config{Role: Exit, To: echoServer(t), Compress: Off, TLS: xtls, Switches: sw})
			entry := startTunnel(t, Config{Role: Entry, To: exit.Addr().String(), Compress: Off, Mux: MuxOn, TLS: etls, Switches: sw})
			r := rand.New(rand.NewPCG(7, 7))
			const clients = 8
			data := make([][]byte, clients)
			for i := range data {
				data[i] = make([]byte, 4<<20+r.IntN(1<<20))
				for j := range data[i] {
					data[i][j] = byte(r.Uint32())
				}
			}
			var wg sync.WaitGroup
			for i := range clients {
				wg.Go(func() {
					got, err := echoAll(entry.Addr().String(), data[i])
					if err != nil {
						t.Errorf("client %d: %v", i, err)
					} else if !bytes.Equal(got, data[i]) {
						t.Errorf("client %d: echo of %d bytes came back as %d bytes, not equal", i, len(data[i]), len(got))
					}
				})
			}
			wg.Wait()
			entry.links.mu.Lock()
			links := append([]*muxLink(nil), entry.links.links...)
			entry.links.mu.Unlock()
			if len(links) == 0 {
				t.Fatal("entry has no mux link")
			}
			for _, l := range links {
				if got := l.loop != nil; got != tc.wantLoop {
					t.Errorf("relay loop running: %v, want %v", got, tc.wantLoop)
				}
			}
			waitIdle(t, entry.Tunnel, exit.Tunnel)
		})
	}
}

// TestRelayLoopRequestReply: many small round trips on several streams at once, the
// loop's fast path, each reply whole and in order.
func TestRelayLoopRequestReply(t *testing.T) {
	entry, _ := pair(t, echoServer(t), Auto, MuxOn, nil, nil)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			c, err := net.Dial("tcp", entry.Addr().String())
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * time.Second))
			if err := pingPong(c, 500); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// echoAll writes data to addr while reading the echo, and returns what came back.
func echoAll(addr string, data []byte) ([]byte, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	errc := make(chan error, 1)
	go func() {
		_, err := c.Write(data)
		if err == nil {
			err = c.(*net.TCPConn).CloseWrite()
		}
		errc <- err
	}()
	got, rerr := io.ReadAll(c)
	if err := <-errc; err != nil {
		return got, fmt.Errorf("write: %w", err)
	}
	if rerr != nil {
		return got, fmt.Errorf("read: %w", rerr)
	}
	return got, nil
}

// TestRelayLoopTLSBufferedFrame: the entry's first frame arrives in the same TLS record
// as the mux preface, so the exit's TLS connection has it decrypted and buffered when the
// relay loop takes the link over, and the WAN socket is never readable for it again. The
// loop must hand it to the stream all the same (not wait in epoll for an arrival that
// already happened).
func TestRelayLoopTLSBufferedFrame(t *testing.T) {
	entryTLS, exitTLS, _ := testCerts(t)
	exit := startTunnel(t, Config{Role: Exit, To: echoServer(t), Mux: MuxOn, TLS: exitTLS})
	raw, err := net.Dial("tcp", exit.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(5 * time.Second))
	cfg := entryTLS.Clone()
	cfg.ServerName = "127.0.0.1" // as an entry sets it from --to
	c := tls.Client(raw, cfg)
	if err := c.Handshake(); err != nil {
		t.Fatal(err)
	}
	var rec []byte
	rec = appendRecord(rec, recOpen, 1, 0)
	rec = appendRecord(rec, recData, 1, 4)
	rec = append(rec, "ping"...)
	e := newFrameEncoder(0, 0)
	defer e.close()
	if err := e.begin(frameRaw); err != nil {
		t.Fatal(err)
	}
	e.add(rec)
	frame, err := e.finish()
	if err != nil {
		t.Fatal(err)
	}
	// One Write: one TLS record with the preface and the frame.
	if _, err := c.Write(append([]byte(muxPreface), frame...)); err != nil {
		t.Fatal(err)
	}
	dec := newFrameDecoder(c, LongMuxWindow) // an exit on a mux link, by default
	defer dec.close()
	var got []byte
	for string(got) != "ping" {
		_, p, err := dec.next()
		if err != nil {
			t.Fatalf("read the echo of a frame sent with the preface: got %q: %v", got, err)
		}
		for len(p) > 0 {
			r, rest, err := nextRecord(p)
			if err != nil {
				t.Fatal(err)
			}
			p = rest
			if r.kind == recData && r.id == 1 {
				got = append(got, r.payload...)
			}
		}
	}
}

// TestRelayLoopLinkCPUs: under LinkCPUsSpread each relay thread runs on one CPU of those
// the process may use, the threads of the process spread evenly over them (two links: two
// threads at the entry, two at the exit), and a thread whose link ended has all its CPUs
// back, as has every CPU taken for a link or a connection; under LinkCPUsFree no thread is
// held on a CPU.
func TestRelayLoopLinkCPUs(t *testing.T) {
	allowed := cpusAllowed(t, "/proc/self/status")
	if len(allowed) < 2 {
		nstest.Unavailable(t, "this process may use %d CPU: nothing to spread over", len(allowed))
	}
	for _, tc := range []struct {
		cpus       LinkCPUs
		wantPinned int
	}{{LinkCPUsSpread, 4}, {LinkCPUsFree, 0}} {
		t.Run(string(tc.cpus), func(t *testing.T) {
			exit := startTunnel(t, Config{Role: Exit, To: echoServer(t), Mux: MuxOn, LinkCPUs: tc.cpus})
			entry := startTunnel(t, Config{Role: Entry, To: exit.Addr().String(), Mux: MuxOn, Links: 2, LinkCPUs: tc.cpus})
			// A connection without the mux takes a CPU at the exit's accept and gives it back.
			perConn := startTunnel(t, Config{Role: Entry, To: exit.Addr().String(), Mux: MuxOff})
			pinged(t, perConn.Addr().String()).Close()
			perConn.stop()
			// Two clients at once: the second opens the entry's second link.
			for range 2 {
				defer pinged(t, entry.Addr().String()).Close()
			}
			entry.links.mu.Lock()
			links := len(entry.links.links)
			entry.links.mu.Unlock()
			if links != 2 {
				t.Fatalf("entry has %d mux links, want 2", links)
			}
			var on map[int]int
			spread := func() bool {
				on = pinnedThreads(t)
				total, lo, hi := 0, 1<<30, 0
				for _, c := range allowed {
					total += on[c]
					lo, hi = min(lo, on[c]), max(hi, on[c])
				}
				return total == tc.wantPinned && hi-lo <= 1
			}
			if !eventually(5*time.Second, spread) {
				t.Fatalf("threads held on one CPU, by CPU: %v; want %d over CPUs %v, evenly", on, tc.wantPinned, allowed)
			}
			entry.stop()
			exit.stop()
			if !eventually(5*time.Second, func() bool { on = pinnedThreads(t); return len(on) == 0 }) {
				t.Fatalf("links closed, threads still held on one CPU, by CPU: %v", on)
			}
			loopCPUs.mu.Lock()
			taken := maps.Clone(loopCPUs.loops)
			loopCPUs.mu.Unlock()
			if len(taken) != 0 {
				t.Fatalf("links and connections closed, CPUs still counted taken: %v", taken)
			}
		})
	}
}

// pinged dials addr and makes five round trips; the caller closes the connection.
func pinged(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if err := pingPong(c, 5); err != nil {
		c.Close()
		t.Fatal(err)
	}
	return c
}

// eventually polls cond every 20 ms until it holds or d has passed.
func eventually(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

// pinnedThreads counts, by CPU, this process's threads allowed only that one CPU (the
// process itself may use several: the test skips otherwise).
func pinnedThreads(t *testing.T) map[int]int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil {
		t.Fatal(err)
	}
	on := map[int]int{}
	for _, f := range tasks {
		if c := cpusAllowed(t, f); len(c) == 1 { // nil for a thread that ended
			on[c[0]]++
		}
	}
	return on
}

// cpusAllowed reads the Cpus_allowed_list of a /proc status file, like "0-1,4".
func cpusAllowed(t *testing.T, status string) []int {
	t.Helper()
	b, err := os.ReadFile(status)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // a thread that ended
		}
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		list, ok := strings.CutPrefix(line, "Cpus_allowed_list:")
		if !ok {
			continue
		}
		var cpus []int
		for part := range strings.SplitSeq(strings.TrimSpace(list), ",") {
			lo, hi, isRange := strings.Cut(part, "-")
			a, err1 := strconv.Atoi(lo)
			b := a
			var err2 error
			if isRange {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: Cpus_allowed_list %q does not parse", status, list)
			}
			for c := a; c <= b; c++ {
				cpus = append(cpus, c)
			}
		}
		return cpus
	}
	t.Fatalf("%s has no Cpus_allowed_list", status)
	return nil
}

// TestRelayLoopCreditInRound: the credit a relay loop returns while it delivers a frame
// leaves in the frame the loop writes at the end of that round, so no writer goroutine is
// woken for it (a wake-up hands work to another thread, often on the other CPU, where it
// preempts another connection's tasks). 2 MiB each way through a 512 KiB window returns
// credit 16 times at each end, and at most four frames may be the writer goroutine's: the
// stream's open, written by the client's goroutine while the loop waits, and what a
// goroutine outside a round sends (a delivery that found the client's socket full, the
// stream's end), which a loaded machine makes now and then.
func TestRelayLoopCreditInRound(t *testing.T) {
	entry, exit := pair(t, echoServer(t), Off, MuxOn, nil, nil)
	c, err := net.Dial("tcp", entry.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(20 * time.Second))
	r := rand.New(rand.NewPCG(3, 3))
	chunk, got := make([]byte, 32<<10), make([]byte, 32<<10)
	for range 64 {
		for i := range chunk {
			chunk[i] = byte(r.Uint32())
		}
		if _, err := c.Write(chunk); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, chunk) {
			t.Fatal("echo differs from what was sent")
		}
	}
	c.Close()
	waitIdle(t, entry.Tunnel, exit.Tunnel)
	waitWire(t, entry.Tunnel, exit.Tunnel)
	for _, end := range []struct {
		name string
		tun  *Tunnel
	}{{"entry", entry.Tunnel}, {"exit", exit.Tunnel}} {
		f := end.tun.Stats().Flush
		if f.Size+f.Timeout != 0 || f.Idle-f.Inline > 4 {
			t.Errorf("%s: %d frames written by the writer goroutine (flush idle=%d inline=%d size=%d timeout=%d), want at most 4",
				end.name, f.Idle-f.Inline, f.Idle, f.Inline, f.Size, f.Timeout)
		}
	}
}
