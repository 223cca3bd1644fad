//go:build linux

package tunnel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// relayLoop moves a mux link's bytes on one locked OS thread, as socat does: it waits in
// its own epoll set for the WAN socket and every stream's local socket, reads whatever is
// ready without blocking, hands the records to the streams and local bytes to the
// scheduler, and then writes one frame for everything the round made ready. The Go
// scheduler's poller never sees these sockets, so an arrival wakes this thread and nothing
// else: no goroutine hand-off per frame, and one write carries the records of every stream
// read in the round. Goroutines keep the slow paths: the writer goroutine when the WAN
// socket is full (the loop never blocks on it), a stream's outLoop when its local peer is
// full, the exit's dials.
type relayLoop struct {
	m    *muxLink
	wan  *sockConn // under the TLS, when there is one
	epfd int
	evfd int // eventfd: wakes the loop when the link fails

	mu      sync.Mutex
	closed  bool
	streams map[uint32]*stream // registered streams by id

	events []unix.EpollEvent
	acc    []byte // WAN bytes read, not yet a whole frame
	start  int    // first unparsed byte of acc
	frame  bytes.Reader
	dec    *frameDecoder
	// round: the loop is between the end of its wait and the write that ends its round
	// (writeReady), which writes whatever became ready meanwhile (inRound).
	round atomic.Bool
	// wanMore: the WAN may have bytes epoll will not report, so the next round reads it
	// without waiting for an event. Records read ahead sit above the socket (in the TLS
	// connection, or the link's own records): those the preface read brought in before
	// the loop took the socket over, and those left when a round stops at its read bound.
	wanMore bool
}

// What an epoll event is for: its Fd field holds the kind, Pad a stream's id.
const (
	tokenWake   = 0
	tokenWAN    = 1
	tokenStream = 2
)

// newRelayLoop detaches the WAN socket and prepares the loop; nil (the link then runs on
// goroutines) when sock is not a plain TCP socket or the loop's descriptors fail.
func newRelayLoop(m *muxLink, sock net.Conn) *relayLoop {
	sc, ok := sock.(*sockConn)
	if !ok || m.t.cfg.Switches.GoroutineLinks {
		return nil
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil
	}
	evfd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil
	}
	if err := sc.detach(); err != nil {
		unix.Close(epfd)
		unix.Close(evfd)
		return nil
	}
	l := &relayLoop{m: m, wan: sc, epfd: epfd, evfd: evfd, streams: map[uint32]*stream{},
		events: make([]unix.EpollEvent, 64), acc: make([]byte, 0, 256<<10)}
	sc.onPend, sc.onClose = l.watchRoom, l.wake
	if err := l.ctl(unix.EPOLL_CTL_ADD, evfd, unix.EPOLLIN, tokenWake, 0); err != nil {
		l.close()
		return nil
	}
	if err := l.ctl(unix.EPOLL_CTL_ADD, sc.sysfd(), unix.EPOLLIN, tokenWAN, 0); err != nil {
		l.close()
		return nil
	}
	return l
}

// loops counts the process's running relay loops.
var loops atomic.Int32

// loopProcs counts a relay loop in (+1) or out (-1) and sets GOMAXPROCS to the CPUs plus
// one for every loop after the first, unless fixed (GOMAXPROCS came from the environment:
// Switches.FixedProcs). A loop's thread spends its waits in epoll_wait, a
// system call that holds its P until the runtime's monitor takes it back; with two loops
// and no P to spare, every return from a wait handed Ps between threads, and two links in
// one process relayed fewer queries than one. One loop on two CPUs leaves a P idle and
// relayed more with no extra P than with one (docs/bench-tunnel.md).
func loopProcs(delta int32, fixed bool) {
	n := loops.Add(delta)
	if fixed {
		return
	}
	runtime.GOMAXPROCS(runtime.NumCPU() + max(int(n)-1, 0))
}

// loopYieldEvery is how often a busy loop passes through the Go scheduler. The runtime's
// monitor thread (sysmon) treats a goroutine that has not been scheduled for 10 ms as
// running too long; a loop waits in epoll_wait, a system call, never in the scheduler, so
// after its first 10 ms the monitor took its P back on nearly every look that found it in
// a system call (~600 times a second per loop in a runtime trace; a runtime built to count
// why gave "running too long" for 93-98% of them) and restarted its own polling at 20 µs each
// time: ~2600-2900 wake-ups a second per process, each a timer interrupt. A yield every 5 ms, well inside the 10, keeps the
// monitor asleep (~100-130 wake-ups a second) for a hand-off of the locked thread 200
// times a second (docs/bench-tunnel.md).
const loopYieldEvery = 5 * time.Millisecond

// allowedCPUs lists the CPUs this process may use, ascending, as they were at its first
// call (nil when the kernel does not say). Read once, before any relay thread is pinned: a
// loop may be locked to the process's main thread, whose mask then names its one CPU.
var allowedCPUs = sync.OnceValue(func() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var cpus []int
	for c := range len(set) * 64 {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
})

// pin keeps the calling thread, locked to the loop, on the CPU picked for the link
// (Config.LinkCPUs). The returned func gives the thread its CPUs back and reports whether
// it could; it does nothing when the loop was not pinned (no CPU picked, or the kernel
// refused).
func (l *relayLoop) pin() (unpin func() bool) {
	nothing := func() bool { return true }
	p := l.m.cpu
	if p == nil {
		return nothing
	}
	var old, one unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		l.m.t.log.Warn("tunnel relay thread left unpinned", "err", fmt.Errorf("read CPU affinity: %w", err))
		return nothing
	}
	one.Set(p.cpu)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		l.m.t.log.Warn("tunnel relay thread left unpinned", "err", fmt.Errorf("set CPU affinity to CPU %d: %w", p.cpu, err))
		return nothing
	}
	l.m.t.log.Debug("tunnel relay thread pinned", "cpu", p.cpu)
	return func() bool { return unix.SchedSetaffinity(0, &old) == nil }
}

func (l *relayLoop) ctl(op, fd int, events uint32, kind int32, id uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: kind, Pad: int32(id)}
	return unix.EpollCtl(l.epfd, op, fd, &ev)
}

// watchRoom makes the loop wait for room in the WAN socket while bytes are pending.
func (l *relayLoop) watchRoom(on bool) {
	ev := uint32(unix.EPOLLIN)
	if on {
		ev |= unix.EPOLLOUT
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.ctl(unix.EPOLL_CTL_MOD, l.wan.sysfd(), ev, tokenWAN, 0)
	}
}

// backlogged reports whether frames wait for room in the WAN socket: the loop then leaves
// writing to the writer goroutine. False without a loop.
func (l *relayLoop) backlogged() bool { return l != nil && l.wan.pending.Load() > 0 }

// loopFrames is the most frames the loop writes in one round (1 MiB at the default frame
// size); the writer goroutine takes any rest, so a bulk round does not grow the batch
// without bound.
const loopFrames = 16

// inRound reports whether the loop is in a round: what becomes ready now leaves in the
// write that ends it, so a kick need not wake the writer goroutine. A stream's delivery in
// the round returns credit for every quarter window its local peer took, and each such
// wake-up handed the credit's frame to another thread, often on the other CPU, where it
// preempted the other connection's tasks (docs/bench-tunnel.md). False without a loop.
func (l *relayLoop) inRound() bool { return l != nil && l.round.Load() }

// wake makes the loop look at the link's state (it failed).
func (l *relayLoop) wake() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		var one [8]byte
		binary.NativeEndian.PutUint64(one[:], 1)
		unix.Write(l.evfd, one[:])
	}
}

// add makes the loop read st's local socket (a detached sockConn).
func (l *relayLoop) add(st *stream, c *sockConn) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errors.New("mux link closed")
	}
	l.streams[st.id] = st
	st.sock = c
	return l.armLocked(st)
}

// armLocked starts reading st. Caller holds l.mu.
func (l *relayLoop) armLocked(st *stream) error {
	if st.polling || l.closed {
		return nil
	}
	if !st.sock.fd.Load().incref() {
		return net.ErrClosed
	}
	defer st.sock.fd.Load().decref()
	if err := l.ctl(unix.EPOLL_CTL_ADD, st.sock.sysfd(), unix.EPOLLIN|unix.EPOLLRDHUP, tokenStream, st.id); err != nil {
		return fmt.Errorf("watch local peer: %w", err)
	}
	st.polling = true
	return nil
}

// pause stops reading st (its send queue is full, or it reached EOF).
func (l *relayLoop) pause(st *stream) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !st.polling || l.closed {
		return
	}
	st.polling = false
	if st.sock.fd.Load().incref() {
		l.ctl(unix.EPOLL_CTL_DEL, st.sock.sysfd(), 0, 0, 0)
		st.sock.fd.Load().decref()
	}
}

// resume reads st again once the scheduler made room in its queue.
func (l *relayLoop) resume(st *stream) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.armLocked(st); err != nil {
		go st.abort(err, true) // the caller holds m.mu
	}
}

// remove forgets an ended stream (its socket closing leaves the epoll set by itself).
func (l *relayLoop) remove(st *stream) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.streams[st.id] == st {
		delete(l.streams, st.id)
	}
}

func (l *relayLoop) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	unix.Close(l.epfd)
	unix.Close(l.evfd)
}

// run is the loop; it returns why the link ended.
func (l *relayLoop) run() error {
	runtime.LockOSThread()
	unpin := l.pin()
	defer func() {
		if unpin() {
			runtime.UnlockOSThread()
		} // else the thread ends with this goroutine rather than serve others on one CPU
	}()
	m := l.m
	fixed := m.t.cfg.Switches.FixedProcs
	loopProcs(1, fixed)
	defer loopProcs(-1, fixed)
	defer l.close()
	l.dec = newFrameDecoder(&l.frame, m.t.cfg.recvWindow(true))
	l.dec.fails = &m.t.c.faults.frameChecks
	defer l.dec.close()
	buf := make([]byte, 64<<10)
	defer l.round.Store(false)
	l.wanMore = true // whatever the handshake and the preface read left buffered
	lastYield := time.Now()
	for {
		if now := time.Now(); now.Sub(lastYield) >= loopYieldEvery {
			runtime.Gosched()
			lastYield = now
		}
		wait := -1
		if l.wanMore {
			wait = 0
		}
		n, err := unix.EpollWait(l.epfd, l.events, wait)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("epoll wait: %w", err)
		}
		l.round.Store(true)
		wanRead := false
		for _, ev := range l.events[:n] {
			switch ev.Fd {
			case tokenWake:
				unix.Read(l.evfd, buf[:8])
				if l.wan.fd.Load().isClosing() {
					return fmt.Errorf("read frame from wan: %w", net.ErrClosed)
				}
			case tokenWAN:
				if ev.Events&unix.EPOLLOUT != 0 {
					if err := l.wan.flushPend(); err != nil {
						return fmt.Errorf("write frame to wan: %w", err)
					}
				}
				if ev.Events&^unix.EPOLLOUT != 0 {
					wanRead = true
					if err := l.readWAN(); err != nil {
						return err
					}
				}
			default:
				l.mu.Lock()
				st := l.streams[uint32(ev.Pad)]
				l.mu.Unlock()
				if st != nil {
					l.readLocal(st)
				}
			}
		}
		if l.wanMore && !wanRead {
			if err := l.readWAN(); err != nil {
				return err
			}
		}
		l.round.Store(false) // before writeReady's claim: a kick from now on wakes the writer
		if m.failed() {
			return nil
		}
		l.writeReady()
	}
}

// writeReady writes what the round made ready, unless a goroutine holds the writer role or
// the WAN socket is full (then the writer goroutine, which may block, writes it).
func (l *relayLoop) writeReady() {
	m := l.m
	if l.backlogged() {
		m.kick()
		return
	}
	m.mu.Lock()
	ok := m.claim()
	m.mu.Unlock()
	if !ok {
		return
	}
	l.wan.loopWrites.Store(true)
	m.write(true)
	l.wan.loopWrites.Store(false)
	if err := l.wan.flushBatch(); err != nil {
		m.fail(fmt.Errorf("write frame to wan: %w", err))
	}
}

// readLocal reads what st's local peer sent and queues it for the scheduler.
func (l *relayLoop) readLocal(st *stream) {
	b := bufPool.Get().(*[]byte)
	*b = (*b)[:cap(*b)]
	n, err := st.sock.Read(*b)
	if err == errWouldBlock {
		bufPool.Put(b)
		return
	}
	st.queueRead(b, n, err, false)
	if err != nil && !errors.Is(err, io.EOF) {
		st.abort(fmt.Errorf("read from local peer: %w", err), true)
	}
}

// readWAN reads what the WAN has and hands every whole frame's records to the streams. It
// sets wanMore when it stopped before the WAN would block.
func (l *relayLoop) readWAN() error {
	m := l.m
	// At most 1 MiB per round: a bulk WAN does not keep the loop from its local sockets.
	// The next round reads on without waiting for epoll: under TLS the rest may already be
	// in the TLS connection's buffer, with the socket itself drained and never readable
	// again for those bytes.
	l.wanMore = true
	for got := 0; got < 1<<20; {
		if cap(l.acc)-len(l.acc) < 16<<10 {
			l.compact(16 << 10)
		}
		n, err := m.wan.Read(l.acc[len(l.acc):cap(l.acc)])
		l.acc = l.acc[:len(l.acc)+n]
		got += n
		if perr := l.frames(); perr != nil {
			return perr
		}
		switch {
		case err == nil && drained(m.wan):
			l.wanMore = false // epoll reports the next bytes: no read to EAGAIN
			return nil
		case err == nil:
		case err == errWouldBlock:
			l.wanMore = false
			return nil
		case errors.Is(err, io.EOF):
			if len(l.acc) > l.start {
				return fmt.Errorf("read frame from wan: %w", io.ErrUnexpectedEOF)
			}
			return errors.New("wan closed without an end frame")
		default:
			return fmt.Errorf("read frame from wan: %w", err)
		}
	}
	return nil
}

// drained reports that the WAN's last read emptied its socket and nothing whole is
// buffered above it (a mux link's own records, or the plain socket); under crypto/tls,
// which cannot tell, false.
func drained(wan net.Conn) bool {
	d, ok := wan.(interface{ drained() bool })
	return ok && d.drained()
}

// frames decodes and dispatches every whole frame in acc.
func (l *relayLoop) frames() error {
	m := l.m
	for {
		have := l.acc[l.start:]
		if len(have) < headerLen {
			return nil
		}
		wire := int(binary.BigEndian.Uint32(have[1:5]))
		if wire > zstdBound(MaxGroupSize) {
			return l.dec.failed(fmt.Errorf("read frame from wan: %w: header type=%d wire=%d", ErrCorrupt, have[0], wire))
		}
		if len(have) < headerLen+wire {
			if need := headerLen + wire; need > cap(l.acc)-l.start {
				l.compact(need - len(have))
			}
			return nil
		}
		l.frame.Reset(have[:headerLen+wire])
		typ, p, err := l.dec.next()
		if err != nil {
			return fmt.Errorf("read frame from wan: %w", err)
		}
		l.start += headerLen + wire
		if err := m.frame(typ, p, headerLen+wire); err != nil {
			return err
		}
	}
}

// compact moves the unparsed bytes to the front of acc and makes room for at least more.
func (l *relayLoop) compact(more int) {
	rest := len(l.acc) - l.start
	if l.start > 0 {
		copy(l.acc, l.acc[l.start:])
		l.acc, l.start = l.acc[:rest], 0
	}
	if cap(l.acc)-rest < more {
		nb := make([]byte, rest, rest+more+64<<10)
		copy(nb, l.acc)
		l.acc = nb
	}
}
