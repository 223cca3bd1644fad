package report

import (
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/result"
)

// replayPt is a replay point: series at rate and one-way delay, its median transaction,
// bytes on the wire, errors by kind, shapes' times and tables' checksums.
func replayPt(series string, rate int64, delayMs, txnP50 float64, wire int64, shapes map[string]float64, sums ...string) result.Point {
	r := &result.ReplayStats{Speed: "max", Statements: 200, TxnLatP50Ms: txnP50, RoundTripsPerTxn: 14.5, RoundTripsPerStatement: 1,
		WireBytesUp: wire / 2, WireBytesDown: wire / 2}
	var total float64
	for s, ms := range shapes {
		r.Shapes = append(r.Shapes, result.ReplayShape{Shape: s, Kind: "select", Count: 5, TimeMs: ms})
		total += ms
	}
	r.Kinds = []result.ReplayKind{{Kind: "select", Statements: 200, TimeMs: total}}
	for i, s := range sums {
		r.Checksums = append(r.Checksums, result.TableChecksum{Table: "t" + string(rune('1'+i)), Checksum: s})
	}
	return result.Point{Study: "replay", Series: series, LinkRateBps: rate, LinkDelayMs: delayMs, Replay: r}
}

func TestReplayFindings(t *testing.T) {
	shapes0 := map[string]float64{"select c from t where id=?": 10, "commit": 2}
	shapes20 := map[string]float64{"select c from t where id=?": 410, "commit": 82}
	pts := []result.Point{
		replayPt("plain", 0, 0, 2.9, 1000, shapes0, "11", "12"),
		replayPt("compression", 0, 0, 4, 600, shapes0, "11", "12"),
		replayPt("plain", 0, 10, 463, 1000, shapes20, "11", "12"),
		replayPt("compression", 0, 10, 470, 580, shapes20, "11", "99"),
	}
	pts[2].Replay.ErrorsByKind = []result.ReplayKindErrors{{Kind: "update", Count: 3}}
	pts[2].Replay.BehindP95S, pts[2].Replay.BehindMaxS = 0.5, 0.9
	got := strings.Join(ReplayFindings(pts), "\n")
	for _, want := range []string{
		"plain: each transaction makes 14.50 round trips (1.00 a statement, from the protocol); at 20 ms RTT the median transaction goes from 2.90 ms to 463.0 ms",
		"plain: these 2 statement shapes (literals stripped) pay 100% of the network's cost (480.0 ms of statement time at 20 ms RTT more than at 0 ms RTT): select c from t where id=? (+400.0 ms); commit (+80.00 ms)",
		"compression saves 42% of plain's bytes on the wire and costs 7.00 ms a transaction at 20 ms RTT (median 470.0 ms against 463.0 ms)",
		"plain at unlimited, 20 ms RTT: 3 of 200 statements failed (update 3)",
		"the tables ended differently after 1 of 4 replays (compression at unlimited, 20 ms RTT)",
		"plain at unlimited, 20 ms RTT: the replayer started statements up to 0.50 s late",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("findings lack %q:\n%s", want, got)
		}
	}
	// The same errors at every point are said once; alike checksums say so.
	for i := range pts {
		pts[i].Replay.ErrorsByKind = []result.ReplayKindErrors{{Kind: "set", Count: 4}}
		pts[i].Replay.Checksums = pts[0].Replay.Checksums
	}
	got = strings.Join(ReplayFindings(pts), "\n")
	if strings.Count(got, "statements failed") != 1 || !strings.Contains(got, "every point: 4 of 200 statements failed (set 4)") ||
		!strings.Contains(got, "every table's checksum is the same after each of the 4 replays") {
		t.Errorf("alike points:\n%s", got)
	}
	// Several rates name the rate; a series that sends more says so.
	pts = []result.Point{replayPt("plain", 20e6, 0, 3, 1000, nil), replayPt("tls", 20e6, 0, 2, 1100, nil), replayPt("plain", 0, 0, 3, 1000, nil)}
	got = strings.Join(ReplayFindings(pts), "\n")
	if !strings.Contains(got, "tls sends 10% more bytes on the wire than plain and saves 1.00 ms a transaction at 20mbit, 0 ms RTT") {
		t.Errorf("several rates:\n%s", got)
	}
	// A difference within the histogram's grain is no difference.
	pts = []result.Point{replayPt("plain", 0, 10, 419.4, 1000, nil), replayPt("compression", 0, 10, 421, 600, nil)}
	got = strings.Join(ReplayFindings(pts), "\n")
	if !strings.Contains(got, "compression saves 40% of plain's bytes on the wire and costs nothing measurable (the latency histogram's 1%) a transaction at 20 ms RTT") {
		t.Errorf("within the grain:\n%s", got)
	}
}

// TestReplaySectionShowsFailures: a failed point is named and left out of the findings;
// a run without checksums or a second RTT draws neither table nor chart.
func TestReplaySectionShowsFailures(t *testing.T) {
	pts := []result.Point{replayPt("plain", 0, 0, 2.9, 1000, nil), replayPt("plain", 0, 10, 463, 1000, nil)}
	pts[1].Failed, pts[1].FailReason = true, "replay: the replayer printed no summary"
	r := &result.Run{Study: "replay", Spec: result.Spec{Workload: "general.log", Driver: "replay", Extra: map[string]string{"speed": "max"}}, Points: pts}
	bs, err := replaySection{}.Build(r, pts)
	if err != nil {
		t.Fatal(err)
	}
	md := Markdown(bs)
	if !strings.Contains(md, "1 point(s) failed, left out of the findings: plain at unlimited, 20 ms RTT: replay: the replayer printed no summary") ||
		strings.Contains(md, "median transaction goes from") || strings.Contains(md, "checksum") {
		t.Errorf("section:\n%s", md)
	}
	for _, b := range bs {
		if _, ok := b.(*Chart); ok {
			t.Error("a chart of one RTT")
		}
	}
}

func TestReplayerCostRow(t *testing.T) {
	pts := []result.Point{replayPt("plain", 0, 0, 2.9, 1000, nil), replayPt("plain", 0, 10, 463, 1000, nil)}
	pts[0].Replay.CPUS, pts[0].Replay.WallS, pts[0].Replay.MaxRSSBytes = 0.4, 2, 30<<20
	pts[1].Replay.CPUS, pts[1].Replay.WallS, pts[1].Replay.MaxRSSBytes = 0.2, 4, 40<<20
	row, ok := replayerCostRow(&result.Run{Environment: result.Environment{CPUs: 2}, Points: pts})
	if !ok || row[1] != "at most 10% of the machine's 2 cores (0.40 s of CPU over a 2.00 s replay, plain at unlimited, 0 ms RTT), peak memory 40.00 MiB" {
		t.Errorf("row %q", row)
	}
	if _, ok := replayerCostRow(&result.Run{Points: []result.Point{{Study: "run"}}}); ok {
		t.Error("a row without a replay")
	}
}
