package link

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/procfs"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

// CheckHosts are the two ends the check runs between, and the wire between them.
type CheckHosts struct {
	ClientNS     string
	ServerNS     string
	ServerAddr   string // e.g. 198.18.0.2
	WireNS       string // to find a running delayer's counters; "" = do not look
	DelayerStats string // the delayer's stats file; "" = ask the delayer in WireNS, if any
}

// DefaultServerAddr is the server host's address in a lab (lab.HostAddr["server"]).
const DefaultServerAddr = "198.18.0.2"

// CheckHostsOf returns the check's ends for a lab state (*lab.State satisfies the interface;
// link cannot import lab, which imports link).
func CheckHostsOf(s interface{ NS(role string) string }) CheckHosts {
	return CheckHosts{ClientNS: s.NS("client"), ServerNS: s.NS("server"), WireNS: s.NS("wire"),
		ServerAddr: DefaultServerAddr}
}

// Prober measures round trips and loss between the hosts. The default enters the
// namespaces; tests substitute one.
type Prober interface {
	// RTT returns up to n echo round trips, stopping at budget.
	RTT(ctx context.Context, h CheckHosts, n int, budget time.Duration) ([]time.Duration, error)
	// Loss sends n datagrams spaced by gap and returns how many came back.
	Loss(ctx context.Context, h CheckHosts, n int, gap, wait time.Duration) (sent, back int, err error)
}

// CheckOptions tune Check; zero values take the defaults.
type CheckOptions struct {
	Duration    time.Duration // per iperf3 direction; default 5s
	Port        int           // iperf3 port; default 5201
	RTTSamples  int           // default 200
	LossPackets int           // default 1000
	Prober      Prober        // default: NetnsProber
	Proc        procfs.FS     // this machine's /proc, where the delayer's command line is
}

// Tolerances of the verdict. The bandwidth band is of TCP goodput against the goodput a
// perfect cap allows: HTB counts Ethernet frames, so a full-size segment carries 1448 payload
// bytes of every 1514 (GoodputShare); iperf3 reports payload. RTT: the median must be within
// 0.3 ms + 5% of the asked RTT (the veth path itself adds ~0.05 ms). Loss: within 3 standard
// errors of the asked rate plus 0.1 point.
const (
	BandwidthLow  = 0.93
	BandwidthHigh = 1.03
	RTTAbsTol     = 300 * time.Microsecond
	RTTRelTol     = 0.05
	GoodputShare  = 1448.0 / 1514.0
)

// Check measures the wire between hosts with real traffic — RTT (TCP echo, idle), loss (UDP
// echo), then iperf3 TCP in each direction — and judges it against c.
func Check(ctx context.Context, r execx.Runner, h CheckHosts, c Condition, o CheckOptions) (*result.WireCheck, error) {
	if o.Duration <= 0 {
		o.Duration = 5 * time.Second
	}
	if o.Port == 0 {
		o.Port = 5201
	}
	if o.RTTSamples == 0 {
		o.RTTSamples = 200
	}
	if o.LossPackets == 0 {
		o.LossPackets = 1000
	}
	if o.Prober == nil {
		o.Prober = NetnsProber{}
	}
	if h.DelayerStats == "" && h.WireNS != "" {
		h.DelayerStats = delayerStatsFile(ctx, r, h.WireNS, o.Proc)
	}
	before, _ := ReadDelayerStats(h.DelayerStats)
	wc := &result.WireCheck{AskedRateBps: c.RateBps, AskedRTTMs: ms(c.RTT()), AskedLossPct: c.LossPct}

	waitQuiet(ctx, r, h, 10*time.Second)
	rtts, err := o.Prober.RTT(ctx, h, o.RTTSamples, o.Duration)
	if err != nil {
		return nil, fmt.Errorf("check link: rtt probe: %w", err)
	}
	wc.RTTMinMs, wc.RTTMedianMs, wc.RTTP99Ms = rttSummary(rtts)

	gap := lossGap(c.RateBps)
	sent, back, err := o.Prober.Loss(ctx, h, o.LossPackets, gap, 2*c.RTT()+300*time.Millisecond)
	if err != nil {
		return nil, fmt.Errorf("check link: loss probe: %w", err)
	}
	wc.LossPct = OneWayLoss(sent, back)

	secs := max(1, int(o.Duration.Round(time.Second)/time.Second))
	omit := OmitSeconds(secs, c.RTT())
	if wc.UpBps, err = iperf(ctx, r, h, o.Port, secs, omit, false); err != nil {
		return nil, fmt.Errorf("check link: iperf3 client->server: %w", err)
	}
	waitQuiet(ctx, r, h, 10*time.Second)
	if wc.DownBps, err = iperf(ctx, r, h, o.Port, secs, omit, true); err != nil {
		return nil, fmt.Errorf("check link: iperf3 server->client: %w", err)
	}
	if h.DelayerStats != "" {
		after, err := ReadDelayerStats(h.DelayerStats)
		if err != nil {
			return nil, fmt.Errorf("check link: %w", err)
		}
		wc.Undelayed = after.Undelayed() - before.Undelayed()
	}
	Judge(c, wc, sent)
	return wc, nil
}

// waitQuiet waits, at most budget, until no TCP socket of the two hosts has data left to send.
// A closed iperf3 connection keeps sending its send buffer (seconds of traffic at 1 Mbit/s),
// and an RTT probe or iperf3 run behind it measures that queue, not the wire.
func waitQuiet(ctx context.Context, r execx.Runner, h CheckHosts, budget time.Duration) {
	deadline := time.Now().Add(budget)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		queued := 0
		for _, ns := range []string{h.ClientNS, h.ServerNS} {
			n, a := execx.InNetns(ns, "ss", "-tnH")
			out, err := r.Run(ctx, n, a...)
			if err != nil {
				return
			}
			queued += SendQueued(string(out))
		}
		if queued == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// SendQueued sums the Send-Q column of `ss -tnH` output (State Recv-Q Send-Q Local Peer).
func SendQueued(ss string) int {
	total := 0
	for _, l := range strings.Split(ss, "\n") {
		if f := strings.Fields(l); len(f) >= 3 {
			if n, err := strconv.Atoi(f[2]); err == nil {
				total += n
			}
		}
	}
	return total
}

// delayerStatsFile asks the delayer running in ns, if any, where it writes its counters (its
// --stats-file argument), so the check needs no knowledge of where the lab keeps files.
func delayerStatsFile(ctx context.Context, r execx.Runner, ns string, proc procfs.FS) string {
	out, err := r.Run(ctx, "ip", "netns", "pids", ns)
	if err != nil {
		return ""
	}
	for _, f := range strings.Fields(string(out)) {
		pid, _ := strconv.Atoi(f)
		args, ok := delayerCmdline(proc, pid)
		if !ok {
			continue
		}
		if i := slices.Index(args, "--stats-file"); i >= 0 && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// lossGap paces the loss probe at about a third of the rate (a 106-byte frame), at least 1 ms.
func lossGap(rateBps int64) time.Duration {
	gap := time.Millisecond
	if rateBps > 0 {
		gap = max(gap, time.Duration(float64(106*8*3)/float64(rateBps)*float64(time.Second)))
	}
	return gap
}

// OneWayLoss turns a round-trip echo count into a one-way loss percentage: each echo crosses
// the wire twice, so back/sent = (1-p)².
func OneWayLoss(sent, back int) float64 {
	if sent == 0 {
		return 0
	}
	return 100 * (1 - math.Sqrt(float64(back)/float64(sent)))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func rttSummary(s []time.Duration) (minMs, medMs, p99Ms float64) {
	xs := stats.DurationsMs(s)
	return stats.Percentile(xs, 0), stats.Percentile(xs, 50), stats.Percentile(xs, 99)
}

// Judge sets wc.OK and wc.Verdict against the tolerances. sent is the loss probe's size.
func Judge(c Condition, wc *result.WireCheck, sent int) {
	var bad, notes []string
	if c.Unlimited() {
		notes = append(notes, "rate unlimited: bandwidth not judged")
	} else if c.LossPct > 0 {
		notes = append(notes, "loss asked: TCP cannot fill a lossy link, bandwidth not judged")
	} else {
		for _, d := range []struct {
			name string
			bps  float64
		}{{"up", wc.UpBps}, {"down", wc.DownBps}} {
			ratio := d.bps / (float64(c.RateBps) * GoodputShare)
			if ratio < BandwidthLow || ratio > BandwidthHigh {
				bad = append(bad, fmt.Sprintf("%s goodput %.3f of the cap's payload rate (want %.2f-%.2f)", d.name, ratio, BandwidthLow, BandwidthHigh))
			}
		}
		if bdp := float64(c.RateBps) / 8 * c.RTT().Seconds(); bdp > 4<<20 {
			notes = append(notes, fmt.Sprintf("bandwidth-delay product %.0f MB may exceed TCP buffers (net.ipv4.tcp_rmem)", bdp/1e6))
		}
	}
	tol := ms(RTTAbsTol) + RTTRelTol*wc.AskedRTTMs
	if e := wc.RTTMedianMs - wc.AskedRTTMs; math.Abs(e) > tol {
		bad = append(bad, fmt.Sprintf("median RTT %.3f ms is %+.3f ms off %.3f ms (want within ±%.3f)", wc.RTTMedianMs, e, wc.AskedRTTMs, tol))
	}
	p := c.LossPct / 100
	ltol := 0.1
	if sent > 0 {
		ltol += 300 * math.Sqrt(p*(1-p)/float64(sent))
	}
	if math.Abs(wc.LossPct-c.LossPct) > ltol {
		bad = append(bad, fmt.Sprintf("loss %.2f%% (asked %.2f%%, want within ±%.2f)", wc.LossPct, c.LossPct, ltol))
	}
	if wc.Undelayed > 0 {
		bad = append(bad, fmt.Sprintf("%d packets could not be delayed (delay line or kernel queue full)", wc.Undelayed))
	}
	wc.OK = len(bad) == 0
	switch {
	case wc.OK:
		wc.Verdict = "ok"
	default:
		wc.Verdict = "FAIL: " + strings.Join(bad, "; ")
	}
	if len(notes) > 0 {
		wc.Verdict += " (" + strings.Join(notes, "; ") + ")"
	}
}

// WriteCheck prints asked vs measured with the error, then the verdict.
func WriteCheck(w io.Writer, wc *result.WireCheck) {
	rel := func(m, a float64) string {
		if a == 0 {
			return "-"
		}
		return fmt.Sprintf("%+.1f%%", 100*(m-a)/a)
	}
	asked := FormatRate(wc.AskedRateBps)
	fmt.Fprintf(w, "%-14s %14s %14s %9s\n", "", "asked", "measured", "error")
	fmt.Fprintf(w, "%-14s %14s %14s %9s\n", "rate up", asked, FormatRate(int64(wc.UpBps/1000)*1000), rel(wc.UpBps, float64(wc.AskedRateBps)))
	fmt.Fprintf(w, "%-14s %14s %14s %9s\n", "rate down", asked, FormatRate(int64(wc.DownBps/1000)*1000), rel(wc.DownBps, float64(wc.AskedRateBps)))
	fmt.Fprintf(w, "%-14s %14.3f %14.3f %9s\n", "rtt median ms", wc.AskedRTTMs, wc.RTTMedianMs, fmt.Sprintf("%+.3f", wc.RTTMedianMs-wc.AskedRTTMs))
	fmt.Fprintf(w, "%-14s %14s %14.3f %9s\n", "rtt min ms", "", wc.RTTMinMs, "")
	fmt.Fprintf(w, "%-14s %14s %14.3f %9s\n", "rtt p99 ms", "", wc.RTTP99Ms, "")
	fmt.Fprintf(w, "%-14s %14.2f %14.2f %9s\n", "loss %", wc.AskedLossPct, wc.LossPct, fmt.Sprintf("%+.2f", wc.LossPct-wc.AskedLossPct))
	fmt.Fprintf(w, "%-14s %14s %14d\n", "undelayed pkts", "0", wc.Undelayed)
	fmt.Fprintf(w, "verdict: %s\n", wc.Verdict)
}

// OmitSeconds is how many seconds iperf3 leaves out of its average (-O), on top of the secs it
// measures: slow start takes log2(BDP/10 segments) round trips, ~3 s at 1 Gbit/s and 250 ms,
// and is not what a long transfer sees. 1 s up to 50 ms RTT, then 1 s more per 100 ms, at most
// 3; none for tests shorter than 3 s.
func OmitSeconds(secs int, rtt time.Duration) int {
	if secs < 3 {
		return 0
	}
	return min(3, 1+int((rtt+50*time.Millisecond)/(100*time.Millisecond)))
}

// iperf runs one iperf3 test: the server in the server namespace for exactly one test, the
// client in the client namespace (reverse = server sends). It returns what the receiver got
// over secs seconds after the first omit seconds.
func iperf(ctx context.Context, r execx.Runner, h CheckHosts, port, secs, omit int, reverse bool) (float64, error) {
	sctx, cancel := context.WithTimeout(ctx, time.Duration(secs+omit+30)*time.Second)
	defer cancel()
	srvDone := make(chan error, 1)
	go func() {
		n, a := execx.InNetns(h.ServerNS, "iperf3", "-s", "-1", "-B", h.ServerAddr, "-p", strconv.Itoa(port))
		_, err := r.Run(sctx, n, a...)
		srvDone <- err
	}()
	args := []string{"-c", h.ServerAddr, "-p", strconv.Itoa(port), "-t", strconv.Itoa(secs)}
	if reverse {
		args = append(args, "-R")
	}
	args = append(args, "-J")
	if omit > 0 {
		args = append(args, "-O", strconv.Itoa(omit)) // leave slow start out of the average
	}
	var bps float64
	var err error
	for try := 0; try < 30; try++ { // the server needs a moment to listen
		n, a := execx.InNetns(h.ClientNS, "iperf3", args...)
		var out []byte
		out, err = r.Run(sctx, n, a...)
		// iperf3 -J reports a refused connection in the JSON, sometimes with exit status 0.
		if len(out) > 0 {
			bps, err = ParseIperf(out)
		}
		if err == nil || !strings.Contains(err.Error(), "connect") || sctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		cancel()
		<-srvDone
		return 0, err
	}
	select {
	case <-srvDone:
	case <-time.After(5 * time.Second):
		cancel()
		<-srvDone
	}
	return bps, nil
}

// ParseIperf returns end.sum_received.bits_per_second of an iperf3 -J report.
func ParseIperf(b []byte) (float64, error) {
	var rep struct {
		Error string `json:"error"`
		End   struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return 0, fmt.Errorf("parse iperf3 json: %w", err)
	}
	if rep.Error != "" {
		return 0, fmt.Errorf("iperf3: %s", rep.Error)
	}
	if rep.End.SumReceived.BitsPerSecond <= 0 {
		return 0, errors.New("iperf3 json: no end.sum_received.bits_per_second")
	}
	return rep.End.SumReceived.BitsPerSecond, nil
}
