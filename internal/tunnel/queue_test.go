package tunnel

import (
	"net"
	"runtime"
	"testing"
	"time"
)

func TestQueueSample(t *testing.T) {
	us := time.Microsecond
	const mss = 1448
	tests := []struct {
		name string
		s    queueSample
		want bool
	}{
		{"idle loopback", queueSample{srtt: 40 * us, minRTT: 10 * us}, false},
		{"loaded host, RTT spike under queueDelay", queueSample{srtt: 3 * time.Millisecond, minRTT: 10 * us, inflight: 64 << 10, mss: mss}, false},
		{"narrow link queue", queueSample{srtt: 14 * time.Millisecond, minRTT: 20 * us, inflight: 36 << 10, mss: mss}, true},
		{"long path, jitter", queueSample{srtt: 55 * time.Millisecond, minRTT: 50 * time.Millisecond, inflight: 64 << 10, mss: mss}, false},
		{"long path, queue", queueSample{srtt: 80 * time.Millisecond, minRTT: 50 * time.Millisecond, inflight: 64 << 10, mss: mss}, true},
		// The same RTTs with two segments or less in flight: the peer's ACK may wait for
		// its reply (a server 6 ms on a query) or its delayed-ACK timer.
		{"requests, ACK on a slow reply", queueSample{srtt: 6 * time.Millisecond, minRTT: 10 * us, inflight: 764, mss: mss}, false},
		{"two full segments", queueSample{srtt: 14 * time.Millisecond, minRTT: 20 * us, inflight: 2 * mss, mss: mss}, false},
		{"lone write, delayed ACK", queueSample{srtt: 40 * time.Millisecond, minRTT: 50 * us, inflight: 300, mss: mss}, false},
		{"more than two segments", queueSample{srtt: 14 * time.Millisecond, minRTT: 20 * us, inflight: 2*mss + 1, mss: mss}, true},
		{"bytes held in the socket", queueSample{notsent: 256 << 10, srtt: 40 * us, minRTT: 10 * us}, true},
		{"receiver window limited", queueSample{notsent: 256 << 10, srtt: 20 * time.Millisecond, minRTT: 10 * us, rwndShare: 0.9}, false},
		{"no RTT yet", queueSample{}, false},
	}
	for _, tt := range tests {
		if got := tt.s.queued(); got != tt.want {
			t.Errorf("%s: queued = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestAutoQueuedLink: writes that never block (request/response the socket absorbs) but a
// queue on the path must make auto compress; a lone spike must not; the queue clearing
// must bring raw back; a stream zstd cannot shrink stays raw.
func TestAutoQueuedLink(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := time.Millisecond
	queue := queueSample{srtt: 15 * ms, minRTT: 20 * time.Microsecond, delivery: 2.5e6, inflight: 36 << 10, mss: 1448}
	clear := queueSample{srtt: 60 * time.Microsecond, minRTT: 20 * time.Microsecond, delivery: 2.5e6}
	feed := func(a *autoPolicy, s queueSample, n int, at time.Time) {
		for i := range n {
			a.observe(frameRaw, 16<<10, 16<<10+headerLen, 0, 20*time.Microsecond, at)
			a.observeQueue(s, at.Add(time.Duration(i)*probeEvery))
		}
	}
	t.Run("queue compresses", func(t *testing.T) {
		a := newAutoPolicy(Auto)
		feed(a, queue, 10, t0)
		if a.choose(t0.Add(60*ms)) != frameZstd {
			t.Fatal("queued link: want zstd")
		}
		// zstd shrinks the stream 2x and encodes far faster than the link delivers: stay.
		a.observe(frameZstd, 16<<10, 8<<10, 100*time.Microsecond, 20*time.Microsecond, t0.Add(60*ms))
		for i := range 20 {
			if a.choose(t0.Add(70*ms+time.Duration(i)*100*ms)) != frameZstd {
				t.Fatalf("group %d: left zstd on a queued, compressible link", i)
			}
			a.observeQueue(queue, t0.Add(70*ms+time.Duration(i)*100*ms))
		}
		if a.choose(t0.Add(70*ms+19*100*ms+staleQueue+ms)) != frameRaw {
			t.Fatal("queue gone for staleQueue: want raw")
		}
	})
	t.Run("cold stream is not judged", func(t *testing.T) {
		// The first zstd groups of a stream barely compress (no history yet); auto keeps
		// compressing until it has seen warmRaw bytes, then judges: here the warm stream
		// shrinks 3x, so it stays on zstd.
		a := newAutoPolicy(Auto)
		feed(a, queue, 10, t0)
		for i := range 40 {
			now := t0.Add(60*ms + time.Duration(i)*10*ms)
			a.observeQueue(queue, now)
			if a.choose(now) != frameZstd {
				t.Fatalf("group %d (%d KiB through zstd): left zstd", i, int(a.zLong.raw)>>10)
			}
			wire := 16<<10 - 300 // cold: ratio ~1.02
			if a.zLong.raw >= warmRaw {
				wire = 16 << 10 / 3
			}
			a.observe(frameZstd, 16<<10, wire, 100*time.Microsecond, 20*time.Microsecond, now)
		}
	})
	t.Run("lone spike stays raw", func(t *testing.T) {
		a := newAutoPolicy(Auto)
		feed(a, clear, 10, t0)
		feed(a, queue, 1, t0.Add(50*ms))
		feed(a, clear, 10, t0.Add(60*ms))
		if a.choose(t0.Add(120*ms)) != frameRaw {
			t.Fatal("one queued sample among clear ones: want raw")
		}
	})
	t.Run("incompressible stays raw", func(t *testing.T) {
		a := newAutoPolicy(Auto)
		feed(a, queue, 10, t0)
		a.choose(t0.Add(60 * ms))
		raw := 0
		for i := range 100 {
			now := t0.Add(70*ms + time.Duration(i)*10*ms)
			a.observeQueue(queue, now)
			if a.choose(now) == frameRaw {
				raw++
			} else {
				a.observe(frameZstd, 16<<10, 16<<10+40, 100*time.Microsecond, 20*time.Microsecond, now)
			}
		}
		if raw < 80 {
			t.Fatalf("ratio 1.0 on a queued link: %d/100 raw groups, want most", raw)
		}
	})
	t.Run("link faster than the encoder", func(t *testing.T) { linkFasterThanEncoder(t, queue, feed, false) })
	// With --level auto on a mux link the level policy keeps the encoder fast enough by its
	// busy share; the kernel's delivery rate (high-erring) must not send the link raw.
	t.Run("levelled: the level policy judges speed", func(t *testing.T) { linkFasterThanEncoder(t, queue, feed, true) })
}

func linkFasterThanEncoder(t *testing.T, queue queueSample, feed func(*autoPolicy, queueSample, int, time.Time), levelled bool) {
	t0 := time.Unix(1000, 0)
	ms := time.Millisecond
	{
		a := newAutoPolicy(Auto)
		a.levelled = levelled
		fast := queue
		fast.delivery = 1e9
		feed(a, fast, 10, t0)
		a.choose(t0.Add(60 * ms))
		raw := 0
		for i := range 100 {
			now := t0.Add(70*ms + time.Duration(i)*10*ms)
			a.observeQueue(fast, now)
			if a.choose(now) == frameRaw {
				raw++
			} else {
				a.observe(frameZstd, 16<<10, 8<<10, 10*ms, 20*time.Microsecond, now) // 1.6 MB/s encoder
			}
		}
		if !levelled && raw < 80 {
			t.Fatalf("link delivers 1 GB/s, encoder 1.6 MB/s: %d/100 raw groups, want most", raw)
		}
		if levelled && raw > 0 {
			t.Fatalf("levelled, queued link: %d/100 raw groups, want none", raw)
		}
	}
}

// TestProbeReadsTCPInfo reads a real loopback socket without allocating.
func TestProbeReadsTCPInfo(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("TCP_INFO probe is Linux-only")
	}
	addr := serveTCP(t, func(c net.Conn) { buf := make([]byte, 1<<10); c.Read(buf) })
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := newWANProbe(c, wanLowat(DefaultGroupMaxSize))
	if p == nil {
		t.Fatal("no probe for a *net.TCPConn")
	}
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	s, ok := p.sample()
	if !ok || s.srtt <= 0 || s.minRTT <= 0 || s.mss <= 0 {
		t.Fatalf("sample = %+v, ok %v", s, ok)
	}
	if s.inflight != 0 {
		t.Errorf("5 bytes written and acknowledged: %d bytes in flight, want 0", s.inflight)
	}
	if s.queued() {
		t.Errorf("idle loopback socket looks queued: %+v", s)
	}
	if n := testing.AllocsPerRun(100, func() { p.sample() }); n != 0 {
		t.Errorf("sample allocates %.1f times", n)
	}
	if newWANProbe(&slowConn{Conn: c, rate: 1}, 0) != nil {
		t.Error("a wrapped connection has no socket to probe")
	}
}

// TestRTTFloor: the floor is the lowest smoothed RTT of the last 10-20 s, so a path whose
// delay came back reads it again within two spans (TCP's min RTT would not for minutes).
func TestRTTFloor(t *testing.T) {
	var r rttFloor
	at := time.Unix(1000, 0)
	if got := r.get(); got != 0 {
		t.Fatalf("before any sample: %v, want 0", got)
	}
	r.add(0, at) // no sample
	r.add(250*time.Millisecond, at)
	r.add(400*time.Millisecond, at.Add(time.Second)) // a queue: not the floor
	if got := r.get(); got != 250*time.Millisecond {
		t.Fatalf("250 then 400 ms: %v, want 250ms", got)
	}
	at = at.Add(5 * time.Second)
	r.add(50*time.Microsecond, at) // the wire's delay off for a moment
	for i := 1; i <= 2; i++ {
		r.add(250*time.Millisecond, at.Add(time.Duration(i)*rttFloorSpan/2))
	}
	if got := r.get(); got != 50*time.Microsecond {
		t.Fatalf("within two spans of a 50 us sample: %v, want 50us", got)
	}
	r.add(252*time.Millisecond, at.Add(3*rttFloorSpan/2))
	if got := r.get(); got != 250*time.Millisecond {
		t.Fatalf("two spans after the 50 us sample: %v, want 250ms", got)
	}
	at = at.Add(2 * rttFloorSpan)
	r.add(100*time.Millisecond, at)
	r.add(300*time.Millisecond, at.Add(5*rttFloorSpan/2)) // no sample for a whole span
	if got := r.get(); got != 300*time.Millisecond {
		t.Fatalf("after a span without samples: %v, want 300ms", got)
	}
}
