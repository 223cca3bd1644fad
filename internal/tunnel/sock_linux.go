//go:build linux

package tunnel

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sockConn is a TCP connection a mux link's relay loop (relayloop_linux.go) can take over.
// Until detach it passes every call to the runtime's connection. detach moves the socket to
// a descriptor of its own, out of the Go runtime's poller: the loop then waits for it in
// its own epoll set and reads it without blocking (a read with nothing to read returns
// errWouldBlock), so no goroutine is woken per arrival. Writes from goroutines block (poll
// for room); writes while the loop writes (loopWrites set) never block: what the socket
// does not take waits in pend, and the loop sends it when the socket has room again.
type sockConn struct {
	net.Conn                         // the runtime's connection; only its addresses after detach
	fd         atomic.Pointer[rawFD] // set by detach
	loopWrites atomic.Bool           // the relay loop is the writer: never block
	wmu        sync.Mutex
	batch      []byte       // bytes written while loopWrites, for flushBatch
	pend       []byte       // bytes of a batch the socket did not take
	pending    atomic.Int64 // len(pend)
	onPend     func(bool)   // the loop's: watch (or stop watching) the socket for room
	onClose    func()       // the loop's: a closed descriptor leaves epoll without an event
	wdeadline  atomic.Int64 // unix ns; 0 = none
	short      bool         // the last read of the detached socket emptied it (its one reader's)
}

// wrapSock wraps a TCP connection so a relay loop can detach it later; other connections
// (test wrappers) are returned as they are and always run on goroutines.
func wrapSock(c net.Conn) net.Conn {
	if _, ok := c.(*net.TCPConn); ok {
		return &sockConn{Conn: c}
	}
	return c
}

// errWouldBlock is a read of a detached socket with nothing to read. It is temporary, so
// crypto/tls keeps its partial record and the connection usable.
var errWouldBlock = wouldBlockError{}

type wouldBlockError struct{}

func (wouldBlockError) Error() string   { return "socket would block" }
func (wouldBlockError) Timeout() bool   { return true }
func (wouldBlockError) Temporary() bool { return true }

// rawFD is a detached socket's descriptor. Close waits for the operations in progress: the
// descriptor is closed when the last one ends, so its number is never reused under one.
type rawFD struct {
	mu      sync.Mutex
	fd      int
	refs    int
	closing bool
}

func (f *rawFD) incref() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closing {
		return false
	}
	f.refs++
	return true
}

func (f *rawFD) decref() {
	f.mu.Lock()
	f.refs--
	last := f.closing && f.refs == 0
	f.mu.Unlock()
	if last {
		unix.Close(f.fd)
	}
}

func (f *rawFD) close() error {
	f.mu.Lock()
	if f.closing {
		f.mu.Unlock()
		return net.ErrClosed
	}
	f.closing = true
	now := f.refs == 0
	f.mu.Unlock()
	if now {
		return unix.Close(f.fd)
	}
	return nil
}

func (f *rawFD) isClosing() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closing
}

// detach moves the socket out of the runtime's poller (see sockConn). Callers detach
// before anything else uses the connection concurrently.
func (c *sockConn) detach() error {
	if c.fd.Load() != nil {
		return nil
	}
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return errors.New("not a socket")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	nfd := -1
	var derr error
	if err := rc.Control(func(fd uintptr) { nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return err
	}
	if derr != nil {
		return os.NewSyscallError("fcntl F_DUPFD_CLOEXEC", derr)
	}
	if err := unix.SetNonblock(nfd, true); err != nil {
		unix.Close(nfd)
		return os.NewSyscallError("set nonblock", err)
	}
	c.fd.Store(&rawFD{fd: nfd})
	c.Conn.Close() // the runtime's poller forgets the socket; nfd keeps it open
	return nil
}

// detached reports whether detach moved the socket out of the runtime's poller.
func (c *sockConn) detached() bool { return c.fd.Load() != nil }

// sysfd is the detached descriptor for the loop's epoll set.
func (c *sockConn) sysfd() int { return c.fd.Load().fd }

func (c *sockConn) Read(p []byte) (int, error) {
	f := c.fd.Load()
	if f == nil {
		return c.Conn.Read(p)
	}
	if !f.incref() {
		return 0, net.ErrClosed
	}
	defer f.decref()
	for {
		n, err := unix.Read(f.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			c.short = true
			return 0, errWouldBlock
		case err != nil:
			return 0, &net.OpError{Op: "read", Net: "tcp", Addr: c.RemoteAddr(), Err: os.NewSyscallError("read", err)}
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		c.short = n < len(p)
		return n, nil
	}
}

// drained: the last read of the detached socket took less than it asked for, so the
// socket was empty (a TCP read returns what is queued, up to the buffer).
func (c *sockConn) drained() bool { return c.fd.Load() != nil && c.short }

func (c *sockConn) Write(p []byte) (int, error) {
	f := c.fd.Load()
	if f == nil {
		return c.Conn.Write(p)
	}
	if !f.incref() {
		return 0, net.ErrClosed
	}
	defer f.decref()
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.loopWrites.Load() {
		c.batch = append(c.batch, p...) // sent by flushBatch: one write for the round
		return len(p), nil
	}
	// A goroutine that takes the writer role from the loop sends what the loop left first.
	if len(c.pend) > 0 {
		if _, err := c.writeAll(f, c.pend); err != nil {
			return 0, err
		}
		c.setPend(c.pend[:0])
	}
	if len(c.batch) > 0 {
		if _, err := c.writeAll(f, c.batch); err != nil {
			return 0, err
		}
		c.batch = c.batch[:0]
	}
	return c.writeAll(f, p)
}

func (c *sockConn) appendPend(p []byte) {
	was := len(c.pend) > 0
	c.setPend(append(c.pend, p...))
	if !was && c.onPend != nil {
		c.onPend(true)
	}
}

func (c *sockConn) setPend(b []byte) {
	if len(b) == 0 && len(c.pend) > 0 && c.onPend != nil {
		c.onPend(false)
	}
	c.pend = b
	c.pending.Store(int64(len(b)))
}

// flushBatch sends what the loop wrote in its round, without blocking; the rest waits in
// pend.
func (c *sockConn) flushBatch() error {
	f := c.fd.Load()
	c.wmu.Lock()
	defer c.wmu.Unlock()
	b := c.batch
	c.batch = c.batch[:0]
	if len(b) == 0 {
		return nil
	}
	if len(c.pend) > 0 {
		c.appendPend(b)
		return nil
	}
	if !f.incref() {
		return net.ErrClosed
	}
	defer f.decref()
	n, err := writeNB(f.fd, b)
	if err != nil {
		return c.opErr(err)
	}
	if n < len(b) {
		c.appendPend(b[n:])
	}
	return nil
}

// flushPend sends what the socket takes of pend without blocking (the loop, when the
// socket has room). A goroutine writing meanwhile flushes it itself.
func (c *sockConn) flushPend() error {
	f := c.fd.Load()
	if !c.wmu.TryLock() {
		return nil
	}
	defer c.wmu.Unlock()
	if len(c.pend) == 0 || !f.incref() {
		return nil
	}
	defer f.decref()
	n, err := writeNB(f.fd, c.pend)
	if err != nil {
		return c.opErr(err)
	}
	rest := copy(c.pend, c.pend[n:])
	c.setPend(c.pend[:rest])
	return nil
}

// writeNow writes what a detached socket (raw from its SyscallConn) takes now, without
// waiting, and returns how much (0 after an error, which the next read or write reports);
// ok is false for any other RawConn.
func writeNow(raw syscall.RawConn, p []byte) (n int, ok bool) {
	r, ok := raw.(fdRawConn)
	if !ok {
		return 0, false
	}
	if !r.f.incref() {
		return 0, true
	}
	defer r.f.decref()
	n, _ = writeNB(r.f.fd, p)
	return n, true
}

// writeNB writes what the socket takes now.
func writeNB(fd int, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k, err := unix.Write(fd, p[n:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n += k
	}
	return n, nil
}

// writeAll writes p, waiting for room (and the write deadline).
func (c *sockConn) writeAll(f *rawFD, p []byte) (int, error) {
	n := 0
	for {
		k, err := writeNB(f.fd, p[n:])
		n += k
		if err != nil {
			return n, c.opErr(err)
		}
		if n == len(p) {
			return n, nil
		}
		if err := c.waitWritable(f); err != nil {
			return n, err
		}
	}
}

// waitWritable polls for room in slices, so a Close or a deadline meanwhile ends the wait.
func (c *sockConn) waitWritable(f *rawFD) error {
	for {
		if f.isClosing() {
			return net.ErrClosed
		}
		wait := 50 * time.Millisecond
		if dl := c.wdeadline.Load(); dl != 0 {
			left := time.Until(time.Unix(0, dl))
			if left <= 0 {
				return os.ErrDeadlineExceeded
			}
			wait = min(wait, left)
		}
		pfd := []unix.PollFd{{Fd: int32(f.fd), Events: unix.POLLOUT}}
		n, err := unix.Poll(pfd, int(max(wait.Milliseconds(), 1)))
		if err != nil && err != unix.EINTR {
			return c.opErr(err)
		}
		if n > 0 {
			return nil
		}
	}
}

func (c *sockConn) opErr(err error) error {
	return &net.OpError{Op: "write", Net: "tcp", Addr: c.RemoteAddr(), Err: os.NewSyscallError("write", err)}
}

func (c *sockConn) Close() error {
	if f := c.fd.Load(); f != nil {
		err := f.close()
		if c.onClose != nil {
			c.onClose()
		}
		return err
	}
	return c.Conn.Close()
}

// CloseWrite half-closes the socket.
func (c *sockConn) CloseWrite() error {
	f := c.fd.Load()
	if f == nil {
		return c.Conn.(*net.TCPConn).CloseWrite()
	}
	if !f.incref() {
		return net.ErrClosed
	}
	defer f.decref()
	return os.NewSyscallError("shutdown", unix.Shutdown(f.fd, unix.SHUT_WR))
}

// SetLinger as (*net.TCPConn).SetLinger.
func (c *sockConn) SetLinger(sec int) error {
	f := c.fd.Load()
	if f == nil {
		return c.Conn.(*net.TCPConn).SetLinger(sec)
	}
	if !f.incref() {
		return net.ErrClosed
	}
	defer f.decref()
	l := &unix.Linger{Onoff: 1, Linger: int32(sec)}
	if sec < 0 {
		l.Onoff, l.Linger = 0, 0
	}
	return os.NewSyscallError("setsockopt", unix.SetsockoptLinger(f.fd, unix.SOL_SOCKET, unix.SO_LINGER, l))
}

func (c *sockConn) SetDeadline(t time.Time) error {
	if c.fd.Load() == nil {
		return c.Conn.SetDeadline(t)
	}
	return c.SetWriteDeadline(t)
}

// SetReadDeadline: a detached socket's reads never wait.
func (c *sockConn) SetReadDeadline(t time.Time) error {
	if c.fd.Load() == nil {
		return c.Conn.SetReadDeadline(t)
	}
	return nil
}

func (c *sockConn) SetWriteDeadline(t time.Time) error {
	if c.fd.Load() == nil {
		return c.Conn.SetWriteDeadline(t)
	}
	var ns int64
	if !t.IsZero() {
		ns = t.UnixNano()
	}
	c.wdeadline.Store(ns)
	return nil
}

// SyscallConn gives the socket to the TCP_INFO probe and to the stream's non-blocking
// writes.
func (c *sockConn) SyscallConn() (syscall.RawConn, error) {
	if f := c.fd.Load(); f != nil {
		return fdRawConn{c: c, f: f}, nil
	}
	return c.Conn.(syscall.Conn).SyscallConn()
}

// fdRawConn is a detached socket's syscall.RawConn.
type fdRawConn struct {
	c *sockConn
	f *rawFD
}

func (r fdRawConn) Control(fn func(fd uintptr)) error {
	if !r.f.incref() {
		return net.ErrClosed
	}
	defer r.f.decref()
	fn(uintptr(r.f.fd))
	return nil
}

func (r fdRawConn) Read(fn func(fd uintptr) bool) error {
	if !r.f.incref() {
		return net.ErrClosed
	}
	defer r.f.decref()
	for !fn(uintptr(r.f.fd)) {
		pfd := []unix.PollFd{{Fd: int32(r.f.fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, 50); err != nil && err != unix.EINTR {
			return err
		}
		if r.f.isClosing() {
			return net.ErrClosed
		}
	}
	return nil
}

func (r fdRawConn) Write(fn func(fd uintptr) bool) error {
	if !r.f.incref() {
		return net.ErrClosed
	}
	defer r.f.decref()
	for !fn(uintptr(r.f.fd)) {
		if err := r.c.waitWritable(r.f); err != nil {
			return err
		}
	}
	return nil
}
