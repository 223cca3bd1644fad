package link

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/result"
)

func TestParseIperf(t *testing.T) {
	b, err := os.ReadFile("testdata/iperf3-up.json") // real iperf3 3.12 over loopback
	if err != nil {
		t.Fatal(err)
	}
	bps, err := ParseIperf(b)
	if err != nil || bps < 1e9 || bps > 1e11 {
		t.Errorf("ParseIperf = %g, %v; want ~11 Gbit/s", bps, err)
	}
	b, _ = os.ReadFile("testdata/iperf3-refused.json") // iperf3 exits 0 here
	if _, err := ParseIperf(b); err == nil || !strings.Contains(err.Error(), "unable to connect") {
		t.Errorf("refused report parsed as %v", err)
	}
}

type fakeProber struct {
	rtts       []time.Duration
	sent, back int
}

func (f fakeProber) RTT(context.Context, CheckHosts, int, time.Duration) ([]time.Duration, error) {
	return f.rtts, nil
}
func (f fakeProber) Loss(context.Context, CheckHosts, int, time.Duration, time.Duration) (int, int, error) {
	return f.sent, f.back, nil
}

func TestCheckRunsIperfBothWaysAndJudges(t *testing.T) {
	up := `{"end":{"sum_received":{"bits_per_second":48500000}}}`
	f := &execx.Fake{Responses: map[string]string{
		"ip netns exec c iperf3 -c 198.18.0.2 -p 5201 -t 2 -R -J": `{"end":{"sum_received":{"bits_per_second":47000000}}}`,
		"ip netns exec c iperf3 -c 198.18.0.2 -p 5201 -t 2 -J":    up,
	}}
	var rtts []time.Duration
	for i := range 100 {
		rtts = append(rtts, 40*time.Millisecond+time.Duration(i)*5*time.Microsecond)
	}
	c := Condition{RateBps: 50_000_000, Delay: 20 * time.Millisecond}
	wc, err := Check(context.Background(), f, CheckHosts{ClientNS: "c", ServerNS: "s", ServerAddr: "198.18.0.2"}, c,
		CheckOptions{Duration: 2 * time.Second, Prober: fakeProber{rtts: rtts, sent: 1000, back: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	if wc.UpBps != 48.5e6 || wc.DownBps != 47e6 || !wc.OK {
		t.Errorf("check = %+v, want up 48.5M, down 47M, ok", wc)
	}
	servers := 0
	for _, l := range f.Lines() {
		if l == "ip netns exec s iperf3 -s -1 -B 198.18.0.2 -p 5201" {
			servers++
		}
	}
	if servers != 2 {
		t.Errorf("%d one-shot iperf3 servers, want 2: %v", servers, f.Lines())
	}
	var sb strings.Builder
	WriteCheck(&sb, wc)
	if !strings.Contains(sb.String(), "verdict: ok") || !strings.Contains(sb.String(), "-3.0%") {
		t.Errorf("report:\n%s", sb.String())
	}
}

func TestJudge(t *testing.T) {
	c := Condition{RateBps: 100_000_000, Delay: 10 * time.Millisecond, LossPct: 0}
	base := result.WireCheck{AskedRateBps: c.RateBps, AskedRTTMs: 20, UpBps: 96e6, DownBps: 95e6, RTTMedianMs: 20.4}
	cases := []struct {
		name string
		mod  func(*result.WireCheck)
		ok   bool
		word string
	}{
		{"good", func(*result.WireCheck) {}, true, "ok"},
		{"slow up", func(w *result.WireCheck) { w.UpBps = 88e6 }, false, "up goodput"},
		{"too fast", func(w *result.WireCheck) { w.DownBps = 99e6 }, false, "down goodput"},
		{"rtt off", func(w *result.WireCheck) { w.RTTMedianMs = 21.4 }, false, "median RTT"}, // tol 1.3 ms
		{"lossy", func(w *result.WireCheck) { w.LossPct = 0.5 }, false, "loss"},
		{"undelayed", func(w *result.WireCheck) { w.Undelayed = 3 }, false, "could not be delayed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wc := base
			tc.mod(&wc)
			Judge(c, &wc, 1000)
			if wc.OK != tc.ok || !strings.Contains(wc.Verdict, tc.word) {
				t.Errorf("verdict %q ok=%v, want ok=%v mentioning %q", wc.Verdict, wc.OK, tc.ok, tc.word)
			}
		})
	}
	if got := OneWayLoss(1000, 980); got < 1.0 || got > 1.02 {
		t.Errorf("OneWayLoss(1000, 980) = %g, want ~1.005", got)
	}
}

func TestSendQueued(t *testing.T) {
	ss := "ESTAB 0      0      198.18.1.2:40312 198.18.0.2:5201\n" +
		"FIN-WAIT-1 0      130304 198.18.0.2:5201  198.18.1.2:40314\n" +
		"ESTAB 12     8      198.18.0.2:3306  198.18.1.2:51000\n"
	if got := SendQueued(ss); got != 130312 {
		t.Errorf("SendQueued = %d, want 130312", got)
	}
	if SendQueued("") != 0 {
		t.Error("empty ss output: want 0")
	}
}

func TestOmitSeconds(t *testing.T) {
	for _, c := range []struct {
		secs int
		rtt  time.Duration
		want int
	}{{2, 250 * time.Millisecond, 0}, {4, 0, 1}, {4, 40 * time.Millisecond, 1}, {4, 100 * time.Millisecond, 2}, {4, 250 * time.Millisecond, 3}, {4, time.Second, 3}} {
		if got := OmitSeconds(c.secs, c.rtt); got != c.want {
			t.Errorf("OmitSeconds(%d, %v) = %d, want %d", c.secs, c.rtt, got, c.want)
		}
	}
}

func TestOffloads(t *testing.T) {
	for _, c := range []struct {
		rate int64
		want bool
	}{{0, true}, {1_000_000, false}, {100_000_000, false}, {OffloadMinRate, true}, {1_000_000_000, true}} {
		if got := Offloads(Condition{RateBps: c.rate}); got != c.want {
			t.Errorf("Offloads(%s) = %v, want %v", FormatRate(c.rate), got, c.want)
		}
	}
}
