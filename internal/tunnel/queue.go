package tunnel

import "time"

// A socket's write returns as soon as the kernel has the bytes, so with request/response
// traffic on a narrow link (each response fits the send buffer) writes never block and the
// busy-time comparison in auto.go cannot see the link. The kernel can: every probeEvery
// the sender reads TCP_INFO of its WAN socket (probe_linux.go) and calls the link the
// bottleneck when a queue builds, either in the socket (bytes written but held back by the
// congestion window) or in the network (the smoothed RTT stands above the path's minimum:
// packets wait at the narrowest hop, like the lab's HTB leaf queue).
const (
	probeEvery = 5 * time.Millisecond
	// queuedBytes unsent in the socket mean the congestion window, not the tunnel, is the
	// limit. Small against TCP_NOTSENT_LOWAT (wanLowat) so it shows before writes block.
	queuedBytes = 16 << 10
	// queueDelay is the RTT above the minimum that counts as a standing queue: well above
	// the scheduling noise of a loaded host (delayed ACKs and run-queue waits add well
	// under a millisecond on an unshaped veth or loopback), well below what a narrow link
	// queues (a 20 mbit link queues 0.6 ms per full frame).
	queueDelay = 4 * time.Millisecond
	// rwndBound: when the receiver's window limits the socket for this share of its busy
	// time, the far end (its CPU, its reader) is the bottleneck, not the link: compressing
	// would only add decoding work there.
	rwndBound = 0.5
)

// wanLowat is the TCP_NOTSENT_LOWAT of an auto-mode WAN socket: two groups may wait unsent,
// so the link never idles between writes, but a queue beyond that blocks the writer.
func wanLowat(groupMax int) int { return min(max(2*groupMax, 64<<10), 4<<20) }

// queueSample is what one TCP_INFO read says about the WAN path.
type queueSample struct {
	notsent   int64         // bytes the tunnel wrote that the kernel has not sent yet
	inflight  int64         // bytes sent and not yet acknowledged
	mss       int64         // the socket's sending segment size
	srtt      time.Duration // smoothed RTT
	minRTT    time.Duration // lowest RTT seen: the path without queues
	delivery  float64       // bytes/s, the kernel's recent delivery-rate estimate
	rwndShare float64       // share of busy time since the last sample limited by the peer's window
	acked     uint64        // bytes the peer has acknowledged since the socket opened
}

// queued reports whether the link is the bottleneck: a queue in the socket or on the path,
// and not a receiver that cannot keep up.
//
// The RTT counts only while more than two full segments are in flight. A receiver ACKs at
// once when it holds more than one full segment unacknowledged (Linux; RFC 5681 asks for at
// least every second one: more than two in flight satisfies either), but holds the ACK of
// less for its reply or its delayed-ACK timer, and the kernel times the round trip to that
// ACK: a request's RTT then includes the server's time on it, a lone small write's up to
// 40 ms of timer, and a CPU-starved peer's late replies read as a queue. With two segments
// or less in flight no queue of this socket's bytes stands anyway (2.9 KB on a 1500-byte
// MTU: 1.2 ms at 20 Mbit/s); measured, an entry facing a server that takes 6 ms a request,
// and the lab's 32-thread unshaped row, read a queue on these RTTs and stepped to zstd 7
// and 11 for requests of a few dozen bytes, while every sample taken with more than two
// segments in flight on those links showed none (docs/bench-tunnel.md).
func (s queueSample) queued() bool {
	if s.rwndShare >= rwndBound {
		return false
	}
	if s.notsent >= queuedBytes {
		return true
	}
	if s.inflight <= 2*s.mss {
		return false
	}
	return s.minRTT > 0 && s.srtt-s.minRTT >= max(queueDelay, s.minRTT/4)
}

// rttFloorSpan is the span of each half of rttFloor's window.
const rttFloorSpan = 10 * time.Second

// rttFloor is the lowest smoothed RTT the WAN socket reported over the last 10-20 s (two
// spans of rttFloorSpan): the path's round trip as it is now, without the queues of a
// backlogged moment. TCP's own min RTT holds its minimum for five minutes, across a change
// of path: a lab wire whose delay was off for a moment read 43 us for minutes after the
// 250 ms delay was back.
type rttFloor struct {
	cur, prev time.Duration // minimum of the current and of the previous span (0: none)
	since     time.Time     // start of the current span
}

// add takes one smoothed-RTT sample at now.
func (r *rttFloor) add(srtt time.Duration, now time.Time) {
	if srtt <= 0 {
		return
	}
	if r.since.IsZero() || now.Sub(r.since) >= rttFloorSpan {
		stale := !r.since.IsZero() && now.Sub(r.since) >= 2*rttFloorSpan
		r.prev, r.cur, r.since = r.cur, srtt, now
		if stale {
			r.prev = 0 // no sample for a whole span: the old minimum is older than the window
		}
		return
	}
	r.cur = min(r.cur, srtt)
}

// get is the floor, 0 before any sample.
func (r *rttFloor) get() time.Duration {
	if r.prev == 0 {
		return r.cur
	}
	return min(r.cur, r.prev)
}
