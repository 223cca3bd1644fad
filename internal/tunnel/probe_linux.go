//go:build linux

package tunnel

import (
	"net"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// wanProbe reads TCP_INFO of one WAN socket. The tunnel writes through *tls.Conn, so it
// keeps the underlying TCP connection's RawConn for this. Everything sample needs is
// allocated once here: sampling is a getsockopt, no garbage.
type wanProbe struct {
	rc       syscall.RawConn
	ctl      func(fd uintptr) // p.read, bound once
	info     unix.TCPInfo
	infoLen  uint32
	errno    syscall.Errno
	prevBusy uint64 // µs the socket had data in flight, at the previous sample
	prevRwnd uint64 // µs of that limited by the receiver's window
}

// newWANProbe returns nil when c is not a socket (a test wrapper): auto then relies on
// blocked writes alone. It also lowers TCP_NOTSENT_LOWAT to lowat, so a write blocks once
// lowat bytes wait unsent in the kernel: a queue at the socket then shows to the writer (as
// a blocked write) instead of hiding in a multi-megabyte send buffer, and data waits in the
// tunnel's buffers, where groups grow and can still be compressed.
func newWANProbe(c net.Conn, lowat int) *wanProbe {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	p := &wanProbe{rc: rc}
	p.ctl = p.read
	if lowat > 0 {
		_ = rc.Control(func(fd uintptr) {
			_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT, lowat)
		})
	}
	return p
}

func (p *wanProbe) read(fd uintptr) {
	p.infoLen = uint32(unsafe.Sizeof(p.info))
	_, _, p.errno = unix.Syscall6(unix.SYS_GETSOCKOPT, fd, unix.IPPROTO_TCP, unix.TCP_INFO,
		uintptr(unsafe.Pointer(&p.info)), uintptr(unsafe.Pointer(&p.infoLen)), 0)
}

// sample reads the socket now; ok is false when the socket is gone or TCP_INFO failed.
func (p *wanProbe) sample() (s queueSample, ok bool) {
	if p == nil {
		return s, false
	}
	if err := p.rc.Control(p.ctl); err != nil || p.errno != 0 {
		return s, false
	}
	in := &p.info
	s = queueSample{
		notsent:  int64(in.Notsent_bytes),
		srtt:     time.Duration(in.Rtt) * time.Microsecond,
		minRTT:   time.Duration(in.Min_rtt) * time.Microsecond,
		delivery: float64(in.Delivery_rate),
		acked:    in.Bytes_acked,
		mss:      int64(in.Snd_mss),
	}
	// Bytes sent count retransmissions; an idle socket reads sent = retransmitted + acked.
	if out := in.Bytes_sent - in.Bytes_retrans; out > in.Bytes_acked {
		s.inflight = int64(out - in.Bytes_acked)
	}
	if busy := in.Busy_time - p.prevBusy; busy > 0 && in.Busy_time >= p.prevBusy && in.Rwnd_limited >= p.prevRwnd {
		s.rwndShare = float64(in.Rwnd_limited-p.prevRwnd) / float64(busy)
	}
	p.prevBusy, p.prevRwnd = in.Busy_time, in.Rwnd_limited
	return s, true
}

// threadCPU is the CPU time the calling thread has used (the caller locks its thread).
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
