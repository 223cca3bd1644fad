package report

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/result"
)

func findingsOf(t *testing.T, r *result.Run) string {
	t.Helper()
	bs, err := Build(r)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, b := range bs {
		if l, ok := b.(List); ok {
			all = append(all, l.Items...)
		}
	}
	return strings.Join(all, "\n")
}

// The bandwidth fixture carries the 2019 post's numbers: the findings must say what the
// post concludes, citing the cells.
func TestBandwidthFindingsMatchThePost(t *testing.T) {
	f := findingsOf(t, bandwidthFixture())
	for _, want := range []string{
		"The 1gbit link saturates at 32 threads: utilisation 90%, bottleneck network (N1, 1gbit, 32 threads: 2666 TPS)",
		"The wire peaked at 116.0 MiB/s", // the post's PMM chart: 116 MiB/s
		"The 10gbit link reaches 18529 TPS at 256 threads, 6.46× (CI 6.42–6.51, 9 batches a side) the 1gbit peak", // N1
		// Where it starts to help comes from the thread counts measured, not a fixed threshold.
		"On the 1gbit link compression hurts up to 4 threads (0.61× to 0.67×) and helps from 16 threads on (1.13× to 1.85×).",
		"16 threads: 2400 → 2714, 1.13×, CI 1.12–1.14, 9 batches a side",
		"On the 10gbit link compression hurts at every thread count measured (0.53× to 0.57×)", // "only reach half"
		"On the 1gbit link TLS costs 9.5% at 1 thread",                                         // "about 10% for the single thread"
		"TLS stops scaling after 32 threads (peak 9131 TPS)",                                   // "does not scale after 32 threads"
	} {
		if !strings.Contains(f, want) {
			t.Errorf("findings lack %q:\n%s", want, f)
		}
	}
	// On 1gbit both plain and TLS sit flat against the full link: that is not a TLS scaling limit.
	if strings.Contains(f, "TLS stops scaling after 128") {
		t.Errorf("flat-against-the-link read as a TLS scaling limit:\n%s", f)
	}
}

func TestBandwidthClassifiesByFieldsNotNames(t *testing.T) {
	r := bandwidthFixture()
	for i := range r.Points {
		r.Points[i].Series = "misleading-name" // the study's own labels must not matter
	}
	bs, err := Build(r)
	if err != nil {
		t.Fatal(err)
	}
	md := Markdown(bs)
	for _, want := range []string{"| threads | 1gbit | 1gbit+compression | compression ÷ plain |",
		"| threads | 10gbit | 10gbit+tls | tls ÷ plain |", "| 32 | 2666 (network) | 10256 (server-cpu) |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestBandwidthSaturationVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name       string
		util       float64
		bottleneck string
		want       string
	}{
		{"full link", 0.95, "network", "saturates at 1 thread"},
		{"busy but cpu-bound", 0.95, "server-cpu", "never saturated"},
		{"idle link", 0.3, "network", "never saturated: its highest utilisation was 30% at 1 thread"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := result.Point{Study: "bandwidth", LinkRateBps: 20e6, Threads: 1, TPS: 100, LinkUtilization: tc.util, Bottleneck: tc.bottleneck}
			f := findingsOf(t, &result.Run{Points: []result.Point{p}})
			if !strings.Contains(strings.ReplaceAll(f, "1 threads", "1 thread"), tc.want) {
				t.Errorf("got %q, want it to say %q", f, tc.want)
			}
		})
	}
}

func TestRepeatsShowMeanAndCI(t *testing.T) {
	md := Markdown(mustBuild(t, bandwidthRepeatFixture()))
	for _, want := range []string{
		"| 1 | 210.0 ± 10.4 (latency) |",     // 3 repeats: 205.8, 210, 214.2
		"1010 ± 257 (2/3 ok) (client-cpu)",   // a failed repeat is left out and counted
		"2900 ± 288 ⚠ (server-cpu)",          // a repeat on a wire that failed its check
		"sysbench exited 1: Lost connection", // and the failure is called out
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestTransportFindingsMatchTheArticle(t *testing.T) {
	f := findingsOf(t, transportFixture())
	for _, want := range []string{
		"TCP instead of a socket on one host costs 22% of throughput at 2 threads: local socket 1159 TPS → local TCP 900.3 TPS (77.7% of it, CI 77.1–78.3%, 10 batches a side)",
		"Crossing the wire costs 64%",
		"The extra socat hop costs 21% of throughput at 2 threads: remote TCP 326.3 TPS → remote \"socket\" (socat) 259.2 TPS",
		"keeps 28.2% (CI 27.9–28.4%, 10 batches a side) of local-socket throughput",
	} {
		if !strings.Contains(f, want) {
			t.Errorf("findings lack %q:\n%s", want, f)
		}
	}
}

func TestReplicationFailuresAreShownAndLeftOut(t *testing.T) {
	bs := mustBuild(t, replicationFixture())
	md := Markdown(bs)
	for _, want := range []string{
		"max-load/tunnel rtt 500 ms, load 600 qps: checksum mismatch",
		// A load whose replica did not end identical is not sustainable: it bounds the limit.
		"| tunnel | 450.0 | 600.0 (checksum mismatch) | +33.3% | no | 450.0 | 2.26 | 0.83 | 1.44× (1.00–2.53) |",
		"tunnel sustains 1.44× the load of native replication (584.2 vs 404.4 QPS, ratio 1.44× (1.00–2.53))",
		"tunnel uses 0.34× the wire bytes per query of native replication",
		// The limits fitted to every probe, the spoilt probe at 600 counting as a failure.
		"| native | 404.4 | 261.5–503.9 | 6 | – (not the limit) | – |",
		"| tunnel | 584.2 | 436.3–830.7 | 6 | – (not the limit) | – |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// A PostgreSQL run's replication log is its WAL: the max-load table says so; a run
// without an engine (older files) keeps MariaDB's binlog.
func TestReplicationLogTermFollowsEngine(t *testing.T) {
	for engine, want := range map[string]string{"": "| binlog Mbit/s |", "mariadb": "| binlog Mbit/s |", "postgres": "| WAL Mbit/s |"} {
		r := replicationFixture()
		if engine != "" {
			r.Spec.Extra = map[string]string{"engine": engine}
		}
		if md := Markdown(mustBuild(t, r)); !strings.Contains(md, want) {
			t.Errorf("engine %q: the max-load table lacks %q", engine, want)
		}
	}
}

// The markdown and HTML reports draw the same blocks: same tables, same charts.
func TestMarkdownAndHTMLAgree(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			bs := mustBuild(t, f.run())
			md, html := Markdown(bs), HTML("t", bs, func(string) []byte { return []byte{1} })
			tables, charts := 0, 0
			for _, b := range bs {
				switch b.(type) {
				case Table:
					tables++
				case *Chart:
					charts++
				}
			}
			if n := strings.Count(html, "<table>"); n != tables {
				t.Errorf("html has %d tables, want %d", n, tables)
			}
			if n := strings.Count(md, "\n| --- |") + strings.Count(md, "\n| ---: |"); n != tables {
				t.Errorf("markdown has %d tables, want %d", n, tables)
			}
			if a, b := strings.Count(html, "<img "), strings.Count(md, "!["); a != charts || b != charts {
				t.Errorf("charts: html %d, markdown %d, want %d", a, b, charts)
			}
		})
	}
}

func TestNoPoints(t *testing.T) {
	if err := Render(t.TempDir(), &result.Run{}); !errors.Is(err, ErrNoPoints) {
		t.Errorf("err = %v, want ErrNoPoints", err)
	}
}

func mustBuild(t *testing.T, r *result.Run) []Block {
	t.Helper()
	bs, err := Build(r)
	if err != nil {
		t.Fatal(err)
	}
	return bs
}

func TestCostsNeverNegative(t *testing.T) {
	for r, want := range map[float64]string{0.905: "9.5%", 1.036: "nothing (3.6% faster)", 0.5: "50%", 1: "0%"} {
		if got := cost(r); got != want {
			t.Errorf("cost(%v) = %q, want %q", r, got, want)
		}
	}
}

// The environment says what was done about CPU idle states as the run recorded it: the
// measuring process's request, and the delay line's own where it ran one (held, failed
// on some points, or not recorded in older results).
func TestEnvTableCPUIdle(t *testing.T) {
	row := func(shaper, idle string, holds ...*result.CPUHold) string {
		r := &result.Run{Environment: result.Environment{Shaper: shaper, CPUIdle: idle}}
		for _, h := range holds {
			r.Points = append(r.Points, result.Point{LabCost: &result.LabCost{DelayLinePackets: 1, CPUHold: h}})
		}
		for _, row := range envTable(r).Rows {
			if row[0] == "CPU idle" {
				return row[1]
			}
		}
		return ""
	}
	if got := row("htb", ""); got != "" {
		t.Errorf("no CPU idle recorded (older results.json): got row %q", got)
	}
	if got := row("htb", "OS default (--keep-cpus-awake=false)"); got != "OS default (--keep-cpus-awake=false)" {
		t.Errorf("htb: %q", got)
	}
	failed := "OS default: could not keep CPUs awake: keep CPUs awake: open /dev/cpu_dma_latency: permission denied"
	if got := row("htb", failed); got != failed {
		t.Errorf("a run whose hold failed: %q", got)
	}
	for _, c := range []struct {
		holds []*result.CPUHold
		want  string
	}{
		{nil, "the nfqueue delay line asks for 0 µs while it runs; whether it held is not recorded in these results"},
		{[]*result.CPUHold{{Held: true}, {Held: true}}, "the nfqueue delay line held 0 µs while it ran (its timing needs it; recorded on 2 point(s))"},
		{[]*result.CPUHold{{Held: true}, {Error: "keep CPUs awake: /dev/cpu_dma_latency reads 50 µs after asking for 0: not held"}, nil},
			"the nfqueue delay line could not hold 0 µs on 1 of 2 point(s) (keep CPUs awake: /dev/cpu_dma_latency reads 50 µs after asking for 0: not held)"},
	} {
		if got := row("htb+nfqueue", "OS default (--keep-cpus-awake=false)", c.holds...); !strings.HasPrefix(got, "OS default (--keep-cpus-awake=false); "+c.want) {
			t.Errorf("nfqueue, holds %v:\n got %q\nwant %q", c.holds, got, c.want)
		}
	}
}

// Without per-second series or repeats there is no spread: a near-doubling is still not
// called "helps"; each thread count is cited once with what was seen.
func TestCompressionFindingWithoutSeriesIsTooShort(t *testing.T) {
	var ps []result.Point
	for _, c := range []struct {
		threads int
		comp    bool
		tps     float64
	}{{1, false, 59.4}, {1, true, 108}, {32, false, 60.44}, {32, true, 107.1}} {
		ps = append(ps, result.Point{Study: "bandwidth", LinkRateBps: 20e6, Threads: c.threads,
			Compression: c.comp, TPS: c.tps, LinkUtilization: 1, Bottleneck: "network"})
	}
	f := findingsOf(t, &result.Run{Points: ps})
	if !strings.Contains(f, "compression cannot be told apart from plain (too short to tell) at every thread count measured (1.77× to 1.82×)") ||
		!strings.Contains(f, "32 threads: 60.44 → 107.1, 1.77×, too short to tell (no CI: one mean a side; 107.1 vs 60.44 TPS)") ||
		strings.Count(f, "32 threads: 60.44") != 1 || strings.Contains(f, "helps") {
		t.Errorf("findings:\n%s", f)
	}
}

// A ratio whose interval includes 1.00× but reaches past the margin is too short to tell,
// never a direction and never "no measurable difference"; the finding says what would
// decide.
func TestIntervalCrossingOneIsTooShort(t *testing.T) {
	f := findingsOf(t, bandwidthRepeatFixture())
	for _, want := range []string{
		"TLS cannot be told apart from plain (too short to tell) at 1 thread (N3 20mbit, 1 thread: 210.0 → 207.0, 0.99×, CI 0.94–1.03, 3 repeats a side)",
		"reaches past the ±5% margin; about 2× the repeats would decide (--repeat 6)",
		"costs 22% at 64 threads (64 threads: 540.0 → 420.0, 0.78×, CI 0.74–0.81, 3 repeats a side",
		// A failed repeat leaves 2: no interval, the repeats as seen, and the count to ask for.
		"64 threads: 540.0 → 1010, 1.87×, too short to tell (no CI: 3 and 2 repeats; every repeat higher: 989.8–1030 vs 529.2–550.8 TPS)",
		"3 and 2 repeats, a repeat failed; use --repeat 4",
	} {
		if !strings.Contains(f, want) {
			t.Errorf("findings lack %q:\n%s", want, f)
		}
	}
	if strings.Contains(f, "no measurable difference") {
		t.Errorf("an interval wider than the margin read as no difference:\n%s", f)
	}
}

// seriesPoint is a bandwidth point whose n steady seconds wander ±2% around tps.
func seriesPoint(threads int, comp bool, tps float64, n int) result.Point {
	p := result.Point{Study: "bandwidth", LinkRateBps: 20e6, Threads: threads, Compression: comp, TPS: tps,
		Bottleneck: "network", DurationS: float64(n)}
	for i := 0; i < n; i++ {
		p.Seconds = append(p.Seconds, result.Second{T: float64(i + 1), TPS: tps * (1 + 0.02*math.Sin(float64(i)*1.7+float64(threads)))})
	}
	return p
}

// The four verdicts, each where the data supports it: helps and hurts on 30 s points, no
// measurable difference on 30 s points 1% apart (significant, but within the lab's
// run-to-run margin), and too short to tell on 5 s points
// (two batches a side) where every compressed second was below every plain one.
func TestFourVerdicts(t *testing.T) {
	ps := []result.Point{
		seriesPoint(1, false, 100, 30), seriesPoint(1, true, 80, 30),
		seriesPoint(8, false, 400, 30), seriesPoint(8, true, 520, 30),
		seriesPoint(16, false, 500, 30), seriesPoint(16, true, 505, 30),
		seriesPoint(32, false, 1632, 5), seriesPoint(32, true, 506.7, 5),
	}
	f := findingsOf(t, &result.Run{Points: ps})
	for _, want := range []string{
		"compression hurts at 1 thread (0.80×) and helps at 8 threads (1.30×) and makes no measurable difference at 16 threads (1.01×) " +
			"and was slower in every measured second (too short to tell by how much) at 32 threads (0.31×)",
		"1 thread: 100.0 → 80.00, 0.80×, CI 0.797–0.803, 10 batches a side",
		"16 threads: 500.0 → 505.0, 1.01×, CI 1.006–1.014, 10 batches a side",
		"32 threads: 1632 → 506.7, 0.31×, too short to tell (no CI: 2 batches a side; every measured second lower: 499.1–515.7 vs 1608–1661 TPS)",
		"To tell: 5 s points give 2 batches a side; use --duration 20s or --repeat 3.",
	} {
		if !strings.Contains(f, want) {
			t.Errorf("findings lack %q:\n%s", want, f)
		}
	}
}

// The wording follows the thread counts measured: with 1, 8 and 32 threads and compression
// helping from 8 on, the finding says "from 8 threads on" (no fixed 16).
func TestCompressionScopeFromMeasuredThreads(t *testing.T) {
	var ps []result.Point
	for _, c := range []struct {
		threads   int
		plain, cz float64
	}{{1, 100, 80}, {8, 400, 520}, {32, 500, 900}} {
		for _, comp := range []bool{false, true} {
			tps := c.plain
			if comp {
				tps = c.cz
			}
			p := result.Point{Study: "bandwidth", LinkRateBps: 20e6, Threads: c.threads, Compression: comp, TPS: tps, Bottleneck: "network"}
			for i := 0; i < 30; i++ {
				p.Seconds = append(p.Seconds, result.Second{T: float64(i + 1), TPS: tps * (1 + 0.01*float64(i%3-1))})
			}
			ps = append(ps, p)
		}
	}
	f := findingsOf(t, &result.Run{Points: ps})
	if !strings.Contains(f, "compression hurts at 1 thread (0.80×) and helps from 8 threads on (1.30× to 1.80×)") {
		t.Errorf("findings:\n%s", f)
	}
}

func TestScopeNamesMeasuredThreads(t *testing.T) {
	all := []ratioAt{{threads: 1}, {threads: 8}, {threads: 32}, {threads: 64}}
	for _, tc := range []struct {
		idx  []int
		want string
	}{
		{[]int{0}, "at 1 thread"},
		{[]int{0, 1}, "up to 8 threads"},
		{[]int{1, 2, 3}, "from 8 threads on"},
		{[]int{1, 2}, "from 8 to 32 threads"},
		{[]int{0, 1, 2, 3}, "at every thread count measured"},
		{[]int{0, 2, 3}, "at 1, 32 and 64 threads"},
	} {
		var sub []ratioAt
		for _, i := range tc.idx {
			sub = append(sub, all[i])
		}
		if got := scope(sub, all); got != tc.want {
			t.Errorf("scope(%v) = %q, want %q", tc.idx, got, tc.want)
		}
	}
}

// A real 5 s-point run (make run): every point has two batches. The report must not call
// a threefold drop no difference, print an interval clipped at 0.00 or unbounded, or
// claim more batches than there were.
func TestQuickRunIsHonest(t *testing.T) {
	md := Markdown(mustBuild(t, quickFixture()))
	f := findingsOf(t, quickFixture())
	for _, bad := range []string{"no measurable difference", "CI 0.00", "unbounded", "about 10 batches", "helps", "hurts"} {
		if strings.Contains(f, bad) {
			t.Errorf("the quick report's findings say %q:\n%s", bad, f)
		}
	}
	if strings.Contains(md, "CI 0.00") || strings.Contains(md, "unbounded") {
		t.Errorf("the quick report prints a clipped or unbounded interval")
	}
	for _, want := range []string{
		"batch means: 2 batches a point",
		"8 threads: 1837 → 827.2, 0.45×, too short to tell (no CI: 2 batches a side; every measured second lower: 729.0–915.0 vs 1468–2137 TPS)",
		"To tell: 5 s points give 2 batches a side; use --duration 20s or --repeat 3.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the quick report lacks %q", want)
		}
	}
}
