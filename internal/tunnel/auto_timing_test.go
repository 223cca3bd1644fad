//go:build !race

// The race detector slows encoding and syscalls several-fold, so a test that judges
// timing (auto mode's blocked writes) cannot tell a slow WAN from a slow sender under it:
// this file is built only without -race, which is how `make test` and CI run, and
// TestAutoPolicy covers the decisions under either.

package tunnel

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"
)

// TestAutoPicksZstdOnSlowWAN sends replication-like traffic through an entry whose WAN
// connection drains at 1 MB/s (writes sleep as a link would): auto must compress. Through
// an unshaped loopback WAN it must send raw.
func TestAutoPicksZstdOnSlowWAN(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	data := concat(binlogTraffic(r, newTable(r, 2000), 2000)) // ~1.2 MB
	tests := []struct {
		name     string
		rate     float64 // bytes/s; 0 = unshaped
		wantZstd bool
	}{
		{"slow WAN", 1e6, true},
		{"fast WAN", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exit := startTunnel(t, Config{Role: Exit, To: echoServer(t), Compress: Off})
			cfg := Config{Role: Entry, Listen: "127.0.0.1:0", To: exit.Addr().String(), Compress: Auto}
			if tt.rate > 0 {
				cfg.dial = slowDial(tt.rate)
			}
			entry := startTunnel(t, cfg)
			start := time.Now()
			if got := exchange(t, entry.Addr().String(), data); !bytes.Equal(got, data) {
				t.Fatal("echo differs")
			}
			s := entry.Stats().Send
			t.Logf("%s: %v, %d zstd / %d raw frames, ratio %.2f, switches %d", tt.name, time.Since(start),
				s.ZstdFrames, s.RawFrames, s.Ratio(), entry.Stats().AutoSwitches)
			zstdShare := float64(s.ZstdFrames) / float64(s.Groups())
			if tt.wantZstd && zstdShare < 0.5 {
				t.Fatalf("slow WAN: only %.0f%% of frames compressed", 100*zstdShare)
			}
			if !tt.wantZstd && s.ZstdFrames > 0 {
				t.Fatalf("fast WAN: %d frames compressed", s.ZstdFrames)
			}
		})
	}
}
