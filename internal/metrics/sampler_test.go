package metrics

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
)

// fakeProc is a procfs root in a temp dir whose counters a test moves forward.
type fakeProc struct {
	t    *testing.T
	root string
}

func newFakeProc(t *testing.T) *fakeProc {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"net", "10", "20"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &fakeProc{t: t, root: root}
}

// netDev rewrites net/dev in place: the sampler holds it open, as it holds the real one.
func (p *fakeProc) netDev(upTx, upPkts, downTx, downPkts uint64) {
	p.t.Helper()
	s := "Inter-|   Receive |  Transmit\n face |bytes packets|bytes packets\n" +
		"    lo: 9 9 0 0 0 0 0 0 9 9 0 0 0 0 0 0\n" +
		fmt.Sprintf("to-server: 1 1 0 0 0 0 0 0 %d %d 0 0 0 0 0 0\n", upTx, upPkts) +
		fmt.Sprintf("to-client: 1 1 0 0 0 0 0 0 %d %d 0 0 0 0 0 0\n", downTx, downPkts)
	if err := os.WriteFile(filepath.Join(p.root, "net", "dev"), []byte(s), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// replace writes a file atomically, as procfs files are re-opened on every read.
func (p *fakeProc) replace(rel, content string) {
	p.t.Helper()
	tmp := filepath.Join(p.root, "tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(p.root, rel)); err != nil {
		p.t.Fatal(err)
	}
}

func (p *fakeProc) pid(pid int, utime, stime uint64) {
	p.replace(fmt.Sprintf("%d/stat", pid), fmt.Sprintf(
		"%d (my sqld) S 1 1 1 0 -1 0 0 0 0 0 %d %d 0 0 20 0 30 0 777 0 0", pid, utime, stime))
}

func (p *fakeProc) stat(busy uint64) {
	p.replace("stat", fmt.Sprintf("cpu  %d 0 0 5000 7 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0 0 0\n", busy))
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestSamplerFromFakeProc(t *testing.T) {
	p := newFakeProc(t)
	p.netDev(1000, 10, 5000, 50)
	p.pid(10, 100, 50)
	p.pid(20, 30, 20) // a client that was already running: not listed yet at Start
	p.stat(1000)
	var clientUp atomic.Bool
	src := Source{UpIface: "to-server", DownIface: "to-client", ProcRoot: p.root,
		ServerPIDs: func() []int { return []int{10, 99} }, // 99 never exists
		ClientPIDs: func() []int {
			if clientUp.Load() {
				return []int{20}
			}
			return nil
		}}
	s := NewSampler(src, 20*time.Millisecond, nil)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	p.pid(10, 250, 100)
	clientUp.Store(true)
	p.stat(1400)
	p.netDev(301000, 210, 105000, 120)
	waitFor(t, func() bool { tt := s.Totals(); return tt.UpBytes == 300000 && tt.CPUTotalSec > 0 })
	samples := s.Stop()

	tt := s.Totals()
	tck := clkTck()
	want := Totals{Elapsed: tt.Elapsed, UpBytes: 300000, DownBytes: 100000, UpPkts: 200, DownPkts: 70,
		CPUServerSec: 200 / tck, CPUClientSec: 50 / tck, CPUTotalSec: 400 / tck}
	if tt != want {
		t.Errorf("totals = %+v\nwant     %+v", tt, want)
	}
	if len(samples) < 2 {
		t.Fatalf("%d samples, want several at 20ms over > 50ms", len(samples))
	}
	// Rates times the measured interval give back the counts: no assumed interval length.
	var up, srv float64
	var prev time.Duration
	for _, sm := range samples {
		dt := (sm.T - prev).Seconds()
		up += sm.UpBytesPerS * dt
		srv += sm.CPUServer * dt
		prev = sm.T
	}
	if math.Abs(up-300000) > 1e-3 || math.Abs(srv-200/tck) > 1e-9 {
		t.Errorf("sum of rate*dt: up %v, server cpu %v", up, srv)
	}
	if avg := tt.Avg(); !near(avg.UpBytesPerS, 300000/tt.Elapsed.Seconds()) {
		t.Errorf("avg up = %v", avg.UpBytesPerS)
	}
	if again := s.Stop(); len(again) != len(samples) {
		t.Errorf("second Stop returned %d samples, first %d", len(again), len(samples))
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSamplerStartErrors(t *testing.T) {
	p := newFakeProc(t)
	p.netDev(0, 0, 0, 0)
	p.stat(1)
	tests := []struct {
		name string
		src  Source
		want error
	}{
		{"missing iface", Source{UpIface: "to-server", DownIface: "nope0"}, ErrIfaceNotFound},
		{"missing netns", Source{WireNS: "wlm-absent", UpIface: "a", DownIface: "b", NetnsDir: t.TempDir()}, ErrNetnsNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.src.ProcRoot = p.root
			s := NewSampler(tc.src, time.Second, nil)
			err := s.Start(context.Background())
			if !errors.Is(err, tc.want) {
				t.Fatalf("Start = %v, want %v", err, tc.want)
			}
			if got := s.Stop(); got != nil {
				t.Errorf("Stop after failed Start = %v", got)
			}
		})
	}
}

func TestSamplerContextCancelEndsLoop(t *testing.T) {
	p := newFakeProc(t)
	p.stat(1)
	ctx, cancel := context.WithCancel(context.Background())
	s := NewSampler(Source{ProcRoot: p.root}, 10*time.Millisecond, nil)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err == nil {
		t.Error("second Start succeeded")
	}
	cancel()
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		t.Fatal("sampling goroutine still running after ctx was cancelled")
	}
	s.Stop()
}

func TestSamplerIPRunner(t *testing.T) {
	p := newFakeProc(t)
	p.stat(1)
	out, err := os.ReadFile(filepath.Join("testdata", "iplink_netns.json"))
	if err != nil {
		t.Fatal(err)
	}
	fake := &execx.Fake{Responses: map[string]string{"ip -n wl-ab12cd-wire -s -j link show": string(out)}}
	s := NewSampler(Source{WireNS: "wl-ab12cd-wire", UpIface: "wlxa", DownIface: "lo",
		ProcRoot: p.root, Runner: fake}, time.Hour, nil)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	if lines := fake.Lines(); len(lines) != 2 || lines[0] != "ip -n wl-ab12cd-wire -s -j link show" {
		t.Errorf("calls = %q, want baseline and final reads", lines)
	}

	bad := NewSampler(Source{WireNS: "wl-ab12cd-wire", UpIface: "to-server", DownIface: "lo",
		ProcRoot: p.root, Runner: fake}, time.Hour, nil)
	if err := bad.Start(context.Background()); !errors.Is(err, ErrIfaceNotFound) {
		t.Errorf("Start = %v, want ErrIfaceNotFound", err)
	}
}
