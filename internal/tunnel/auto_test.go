package tunnel

import (
	"testing"
	"time"
)

func TestAutoPolicy(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := time.Millisecond
	tests := []struct {
		name  string
		feed  func(a *autoPolicy)
		at    time.Duration
		wantZ bool
	}{
		{"nothing observed", func(*autoPolicy) {}, 0, false},
		{"fast writes", func(a *autoPolicy) {
			a.observe(frameRaw, 65536, 65549, 0, 50*time.Microsecond, t0)
		}, 0, false},
		{"blocked, zstd never tried", func(a *autoPolicy) {
			a.observe(frameRaw, 65536, 65549, 0, 32*ms, t0)
		}, ms, true},
		{"blocked long ago", func(a *autoPolicy) {
			a.observe(frameRaw, 65536, 65549, 0, 32*ms, t0)
		}, staleRaw + time.Second, false},
		{"raw moves more per busy second", func(a *autoPolicy) {
			a.observe(frameRaw, 65536, 65549, 0, 2*ms, t0)   // 33 MB/s
			a.observe(frameZstd, 65536, 30000, 3*ms, ms, t0) // 16 MB/s: the encoder is the bottleneck
		}, ms, false},
		{"zstd moves more per busy second", func(a *autoPolicy) {
			a.observe(frameRaw, 65536, 65549, 0, 32*ms, t0)   // 2 MB/s
			a.observe(frameZstd, 65536, 20000, ms, 10*ms, t0) // 6 MB/s
		}, ms, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAutoPolicy(Auto)
			a.lastExplore, a.lastDecay = t0, t0
			tt.feed(a)
			if got := a.choose(t0.Add(tt.at)) == frameZstd; got != tt.wantZ {
				t.Fatalf("zstd = %v, want %v (raw %+v zstd %+v)", got, tt.wantZ, a.raw, a.z)
			}
		})
	}
	for _, m := range []Mode{Off, Zstd} {
		a := newAutoPolicy(m)
		a.observe(frameRaw, 65536, 65549, 0, 32*time.Millisecond, t0)
		if got := a.choose(t0) == frameZstd; got != (m == Zstd) {
			t.Errorf("mode %s chose zstd=%v", m, got)
		}
	}
}

// TestAutoDeliveryFilter: the link-rate estimate ignores the kernel's burst samples on a
// narrow link (seen in the lab: 100 MB/s readings among 1 MB/s ones at 20 mbit) but learns
// a fast link, and recovers from a lone low sample there.
func TestAutoDeliveryFilter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := newAutoPolicy(Auto)
	for i := range 60 {
		d := 1e6
		if i%3 != 0 {
			d = 100e6
		}
		a.observeQueue(queueSample{delivery: d}, t0.Add(time.Duration(i)*probeEvery))
		if i > 0 && a.delivery != 1e6 {
			t.Fatalf("sample %d: narrow link estimated at %.0f B/s", i, a.delivery)
		}
	}
	a.observeQueue(queueSample{delivery: 0}, t0)
	for i := range deliveryWindow {
		a.observeQueue(queueSample{delivery: 900e6}, t0)
		if want := map[bool]float64{true: 900e6, false: 0}[i == deliveryWindow-1]; a.delivery != want {
			t.Fatalf("%d fast samples after a lone 0: estimate %.0f, want %.0f", i+1, a.delivery, want)
		}
	}
}
