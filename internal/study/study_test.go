package study

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/sysbench"
)

func TestFillPointDropsWarmupAndNamesTheBottleneck(t *testing.T) {
	c := LoadCell{Threads: 8, Warmup: 2 * time.Second, Duration: 3 * time.Second}
	var ivs []sysbench.Interval
	var ss []metrics.Sample
	for i := 1; i <= 5; i++ {
		tps := 100.0
		if i <= 2 {
			tps = 10 // warm-up seconds: must not drag the mean down
		}
		ivs = append(ivs, sysbench.Interval{T: float64(i), TPS: tps, QPS: tps * 16, LatPct: 80})
		// 20 mbit link, server->client at 2.4 MB/s = 0.96 of the link.
		ss = append(ss, metrics.Sample{T: time.Duration(i) * time.Second, UpBytesPerS: 100e3,
			DownBytesPerS: 2.4e6, CPUServer: 0.3, CPUClient: 0.1, CPUTotal: 0.5})
	}
	p := result.Point{LinkRateBps: 20_000_000, Threads: 8}
	closedLoop(&p, c, NewSysbench(ivs, &sysbench.Summary{Errors: 3}).Load(), ss, true, result.Cores{Shared: 2}, 1)
	if p.TPS != 100 || p.QPS != 1600 {
		t.Errorf("TPS %v QPS %v: warm-up not dropped", p.TPS, p.QPS)
	}
	if math.Abs(p.LatAvgMs-80) > 1e-9 { // Little: 8 threads / 100 TPS = 80 ms
		t.Errorf("lat avg %v", p.LatAvgMs)
	}
	if math.Abs(p.LinkUtilization-0.96) > 1e-9 || p.Bottleneck != "network" {
		t.Errorf("utilisation %v verdict %q (%s)", p.LinkUtilization, p.Bottleneck, p.BottleneckWhy)
	}
	if p.Errors != 3 || len(p.Seconds) != 5 || !p.Seconds[1].Warmup || p.Seconds[2].Warmup {
		t.Errorf("errors %d seconds %+v", p.Errors, p.Seconds)
	}
	if p.TPSCV != 0 {
		t.Errorf("steady TPS has CV %v", p.TPSCV)
	}
	// One transaction: 2.4e6/100 bytes down, 16 round trips, 0.5/100 CPU-seconds.
	if pr := p.Profile; pr == nil || math.Abs(pr.WireBytesDown-24000) > 1e-6 || pr.RoundTrips != 16 ||
		math.Abs(pr.CPUMachineS-0.005) > 1e-12 || pr.Threads != 8 || pr.LinkRateBps != 20_000_000 {
		t.Errorf("profile %+v", p.Profile)
	}
}

func TestBandwidthMatrix(t *testing.T) {
	slow := link.Condition{RateBps: 20_000_000}
	b := BandwidthOptions{Slow: slow, Fast: link.Condition{}, Experiments: []string{"n2", "n3"},
		Bench: Bench{Threads: []int{1, 16}, Workload: "oltp_read_only", Duration: time.Second}}
	cells := NewBandwidth(b).cells
	if len(cells) != 2*3*2 { // links x (plain, compression, tls) x threads
		t.Fatalf("%d cells", len(cells))
	}
	want := []string{"20mbit", "20mbit+compression", "20mbit+tls", "unlimited", "unlimited+compression", "unlimited+tls"}
	if got := strings.Join(b.series(), ","); got != strings.Join(want, ",") {
		t.Errorf("series %s", got)
	}
	// Grouped by link: the wire is reshaped once.
	for i, c := range cells {
		if (i < 6) != (c.Link.RateBps == slow.RateBps) {
			t.Errorf("cell %d (%s) out of link order", i, c.Series)
		}
		if c.Compression != strings.HasSuffix(c.Series, "+compression") || c.TLS != strings.HasSuffix(c.Series, "+tls") {
			t.Errorf("cell %s: compression %v tls %v", c.Series, c.Compression, c.TLS)
		}
	}
	if _, err := ParseExperiments("n1,n9"); err == nil {
		t.Error("n9 accepted")
	}
}

func TestCalibratedSlowKeepsTheBlogRatio(t *testing.T) {
	// A fast link that peaks at 13 MB/s: the slow rate must carry 1/6.46 of it.
	bps, err := CalibratedSlow(13e6)
	if err != nil {
		t.Fatal(err)
	}
	ratio := 13e6 * 8 / float64(bps)
	if math.Abs(ratio-CalibrationTarget) > 0.01 {
		t.Errorf("fast/slow %v, want %v", ratio, CalibrationTarget)
	}
	if _, err := CalibratedSlow(0); err == nil {
		t.Error("zero peak accepted")
	}
}

func TestTransportCells(t *testing.T) {
	cells := NewTransport(TransportOptions{Paths: TransportPaths, Bench: Bench{Threads: []int{2}, Workload: "oltp_read_only"}}).cells
	if len(cells) != 4 {
		t.Fatalf("%d cells", len(cells))
	}
	hosts := map[string]string{}
	for _, c := range cells {
		hosts[c.Transport] = c.ClientHost + " " + c.Host
		if !strings.Contains(strings.Join(c.Extra, " "), "--point-selects=25") {
			t.Errorf("%s lacks the study's workload knobs: %v", c.Transport, c.Extra)
		}
	}
	if hosts["socket"] != "server " || hosts["local-tcp"] != "server 127.0.0.1" ||
		hosts["remote-tcp"] != "client " || hosts["remote-socket"] != "client " {
		t.Errorf("paths %v", hosts)
	}
	if _, err := ParsePaths("socket,carrier-pigeon"); err == nil {
		t.Error("bad path accepted")
	}
}

func TestFillPointDropsTheDrainAfterTime(t *testing.T) {
	c := LoadCell{Threads: 2, Duration: 2 * time.Second}
	ivs := []sysbench.Interval{{T: 1, TPS: 50}, {T: 2, TPS: 50}, {T: 3, TPS: 1}, {T: 4, TPS: 1}}
	var p result.Point
	closedLoop(&p, c, NewSysbench(ivs, nil).Load(), nil, true, result.Cores{Shared: 2}, 1)
	if p.TPS != 50 || len(p.Seconds) != 2 {
		t.Errorf("TPS %v over %d seconds: the drain after --time leaked in", p.TPS, len(p.Seconds))
	}
}

// A driver that counts its seconds from 2.6 s after the sampler started (its clients took
// that long to connect): the samples of those seconds, the link nearly idle, must not be
// the point's measured seconds.
func TestAlignSamplesDropsTheConnectionPhase(t *testing.T) {
	c := LoadCell{Threads: 128, Warmup: time.Second, Duration: 5 * time.Second}
	var ivs []sysbench.Interval
	for i := 1; i <= 6; i++ {
		ivs = append(ivs, sysbench.Interval{T: float64(i), TPS: 60, QPS: 960})
	}
	var ss []metrics.Sample
	for i := 1; i <= 9; i++ {
		down := 2.5e6 // the 20 mbit link full
		if i <= 3 {
			down = 40e3 // handshakes only
		}
		ss = append(ss, metrics.Sample{T: time.Duration(i) * time.Second, DownBytesPerS: down, CPUServer: 0.1, CPUClient: 0.1, CPUTotal: 0.3})
	}
	sampled := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	ld := NewSysbench(ivs, nil).Load()
	ld.Start = sampled.Add(2600 * time.Millisecond)

	unaligned := result.Point{LinkRateBps: 20_000_000, Threads: 128}
	closedLoop(&unaligned, c, ld, ss, true, result.Cores{Shared: 2}, 1)
	if unaligned.LinkUtilization > 0.7 {
		t.Fatalf("unaligned utilisation %.2f: the test does not model the connection phase", unaligned.LinkUtilization)
	}
	got, lead := alignSamples(ss, sampled, ld)
	if lead != 2600*time.Millisecond || len(got) != 6 || got[0].T != 4*time.Second {
		t.Fatalf("lead %v, %d samples from %v: want 2.6s, 6 from 4s", lead, len(got), got[0].T)
	}
	p := result.Point{LinkRateBps: 20_000_000, Threads: 128}
	closedLoop(&p, c, ld, got, true, result.Cores{Shared: 2}, 1)
	if math.Abs(p.LinkUtilization-1) > 1e-9 || p.Bottleneck != "network" {
		t.Errorf("aligned: utilisation %.2f, verdict %q, want the full link", p.LinkUtilization, p.Bottleneck)
	}

	// Under half a second is the nearest second: nothing dropped; no start: nothing.
	ld.Start = sampled.Add(400 * time.Millisecond)
	if got, lead := alignSamples(ss, sampled, ld); len(got) != len(ss) || lead != 400*time.Millisecond {
		t.Errorf("0.4 s lead: %d samples, lead %v", len(got), lead)
	}
	if got, lead := alignSamples(ss, sampled, NewSysbench(ivs, nil).Load()); len(got) != len(ss) || lead != 0 {
		t.Errorf("a replay without a start: %d samples, lead %v", len(got), lead)
	}
}

func TestClockStart(t *testing.T) {
	at := time.Date(2026, 11, 27, 12, 0, 5, 0, time.UTC)
	if got, want := clockStart(at, 1.5), at.Add(-1500*time.Millisecond); !got.Equal(want) {
		t.Errorf("a line ending 1.5 s into the driver's clock, arrived at %v: start %v, want %v", at, got, want)
	}
}
