package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/result"
)

// headerBlocks is what every report starts with: what ran, where, and anything that makes
// the numbers below less trustworthy (interruption, failed points, wire checks).
func headerBlocks(r *result.Run) []Block {
	title := "wirelab report"
	if r.Study != "" {
		title += ": " + r.Study
	}
	bs := []Block{Heading{1, title}}
	intro := fmt.Sprintf("Run %s, %d points", orDash(r.RunID), len(r.Points))
	if !r.Started.IsZero() {
		intro += ", started " + r.Started.UTC().Format("2006-01-02 15:04:05 UTC")
		if !r.Finished.IsZero() {
			intro += ", took " + r.Finished.Sub(r.Started).Round(1e9).String()
		}
	}
	if r.Tool != "" {
		intro += ", by " + r.Tool
	}
	bs = append(bs, Paragraph{intro + "."})
	if r.Interrupted {
		bs = append(bs, Callout{"warning", "The run was interrupted: only the points finished before the interrupt are reported."})
	}
	var failed, unchecked []string
	for _, p := range r.Points {
		id := fmt.Sprintf("%s/%s at %d threads", p.Study, p.Series, p.Threads)
		if p.Repeat > 0 {
			id += " (repeat " + strconv.Itoa(p.Repeat) + ")"
		}
		if p.Failed {
			failed = append(failed, id+": "+orDash(p.FailReason))
		}
		if f := checkFlag(p); f != "" {
			unchecked = append(unchecked, id+": "+strings.TrimPrefix(f, "⚠ "))
		}
	}
	if len(failed) > 0 {
		bs = append(bs, Callout{"warning", fmt.Sprintf("%d point(s) failed: %s.", len(failed), strings.Join(failed, "; "))})
	}
	if len(unchecked) > 0 {
		bs = append(bs, Callout{"warning", fmt.Sprintf("The wire did not match what was asked before %d point(s) (marked ⚠ below): %s.",
			len(unchecked), strings.Join(unchecked, "; "))})
	}
	if c := labBoundCallout(r.Points); c != nil {
		bs = append(bs, c)
	}
	for _, n := range r.Notes {
		bs = append(bs, Callout{"note", n})
	}
	bs = append(bs, Heading{2, "Environment"}, envTable(r))
	if rb := readBackBlock(r.Environment); rb != nil {
		bs = append(bs, rb)
	}
	return bs
}

func envTable(r *result.Run) Table {
	e, s := r.Environment, r.Spec
	rows := machineRows(e)
	rows = append(rows, serverRows(e)...)
	// The load driver that ran: a pgbench run, and a replay onto a dump, record no sysbench version.
	if e.SysbenchVersion != "" || (e.PgbenchVersion == "" && s.Driver != "replay") {
		rows = append(rows, []string{"sysbench", orDash(e.SysbenchVersion)})
	}
	if e.PgbenchVersion != "" {
		rows = append(rows, []string{"pgbench", e.PgbenchVersion})
	}
	// What the measuring process and the delay line each asked of the CPUs' idle states, as
	// the run recorded it.
	var idle []string
	if e.CPUIdle != "" {
		idle = append(idle, e.CPUIdle)
	}
	if h := delayLineHold(e, r.Points); h != "" {
		idle = append(idle, h)
	}
	if len(idle) > 0 {
		rows = append(rows, []string{"CPU idle", strings.Join(idle, "; ")})
	}
	if e.TCPCongestion != "" {
		rows = append(rows, []string{"TCP congestion control", congestionText(e.TCPCongestion)})
	}
	rows = append(rows, linkRows(e)...)
	if row, ok := labCostRow(r.Points); ok {
		rows = append(rows, row)
	}
	if row, ok := replayerCostRow(r); ok {
		rows = append(rows, row)
	}
	if e.Machine != nil {
		rows = append(rows, []string{"machine", machineText(e.Machine)})
	}
	conns := map[string]string{"pgbench": "clients", "replay": "sessions"}[s.Driver]
	if conns == "" {
		conns = "threads"
	}
	rows = append(rows,
		[]string{"workload", orDash(s.Workload)},
		[]string{conns, orDash(threadsList(s.Threads))},
		[]string{"duration", durationText(s)},
	)
	if s.Repeat > 1 {
		rows = append(rows, []string{"repeat", fmt.Sprintf("%d (tables show mean ± 95%% CI)", s.Repeat)})
	}
	if s.Tables > 0 {
		rows = append(rows, []string{"data", fmt.Sprintf("%d tables × %d rows", s.Tables, s.TableSize)})
	}
	if s.Scale > 0 {
		rows = append(rows, []string{"data", fmt.Sprintf("pgbench scale %d (%d accounts)", s.Scale, s.Scale*100_000)})
	}
	// The margin every "no measurable difference" of the report is read within.
	rows = append(rows, []string{"equivalence margin", result.MarginOf(r).Text()})
	return Table{Header: []string{"setting", "value"}, Rows: rows, Numeric: []bool{false, false}}
}

// machineRows say what the run ran on: the machine's kernel, CPUs and memory when client
// and server shared it (the lab, and files without hosts), else a row per host, as each
// host's agent read it, so the cores a verdict weighed are on the page.
func machineRows(e result.Environment) [][]string {
	if result.HostCores(e.Hosts).Separate() {
		var rows [][]string
		for _, h := range e.Hosts {
			rows = append(rows, []string{fmt.Sprintf("%s host %s", h.Role, h.Name), hostText(h)})
		}
		return rows
	}
	cpus := strconv.Itoa(e.CPUs)
	if e.CPUModel != "" {
		cpus += " × " + e.CPUModel
	}
	rows := [][]string{
		{"kernel", orDash(e.Kernel)},
		{"CPUs", cpus},
	}
	if e.MemoryBytes > 0 {
		rows = append(rows, []string{"memory", gib(e.MemoryBytes)})
	}
	if len(e.Hosts) == 1 && e.Hosts[0].ClockSource != "" {
		rows = append(rows, []string{"clock source", e.Hosts[0].ClockSource})
	}
	return rows
}

// hostText is one host in a line: "48 cores × Xeon …, 188.4 GiB, kernel 6.1.0, clock tsc".
func hostText(h result.Host) string {
	parts := []string{fmt.Sprintf("%d cores", h.Cores)}
	if h.CPUModel != "" {
		parts[0] += " × " + h.CPUModel
	}
	if h.MemoryBytes > 0 {
		parts = append(parts, gib(h.MemoryBytes))
	}
	if h.Kernel != "" {
		parts = append(parts, "kernel "+h.Kernel)
	}
	if h.ClockSource != "" {
		parts = append(parts, "clock "+h.ClockSource)
	}
	return strings.Join(parts, ", ")
}

func gib(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

// pointsTable lists points as measured, one row each: the appendix of a study and the
// fallback for unknown studies.
func pointsTable(caption string, pts []result.Point) Table {
	t := Table{Caption: caption, Header: []string{"series", "threads", "repeat", "TPS", "p95 ms",
		"wire MB/s up", "wire MB/s down", "link util.", "server CPU", "client CPU", "TPS CV", "bottleneck", "check"}}
	percentiles := withHistograms(pts)
	if percentiles {
		t.Header[4] = latencyHeader
	}
	t.Numeric = numericCols(len(t.Header))
	t.Numeric[len(t.Header)-2], t.Numeric[len(t.Header)-1] = false, false
	for _, p := range pts {
		rep := "–"
		if p.Repeat > 0 {
			rep = strconv.Itoa(p.Repeat)
		}
		tps, bn := num(p.TPS), orDash(p.Bottleneck)
		if p.Failed {
			tps, bn = "FAILED", orDash(p.FailReason)
		}
		lat := num(p.LatP95Ms)
		if percentiles {
			lat = latencyCell([]result.Point{p})
		}
		t.Rows = append(t.Rows, []string{p.Series, strconv.Itoa(p.Threads), rep, tps, lat,
			mbps(p.WireBytesPerSUp), mbps(p.WireBytesPerSDown), utilText(p.LinkUtilization, p.LinkRateBps),
			num(p.CPUServer), num(p.CPUClient), pct(p.TPSCV), bn, pointCheck(p)})
	}
	return t
}

// utilText is link utilisation, or a dash for an unlimited link where it means nothing.
func utilText(u float64, rateBps int64) string {
	if rateBps == 0 {
		return "–"
	}
	return pct(u)
}

// pointCheck is a point's wire-check cell: its verdict when it failed, "ok", or "–" when
// the wire was not checked before it.
func pointCheck(p result.Point) string {
	if f := checkFlag(p); f != "" {
		return f
	}
	if p.WireCheck != nil {
		return "ok"
	}
	return "–"
}

func durationText(s result.Spec) string {
	switch {
	case s.Driver == "replay" && s.DurationS == 0:
		return "the whole log per point"
	case s.Driver == "replay":
		return fmt.Sprintf("at most %gs per point (--for)", s.DurationS)
	case s.WarmupS <= 0:
		return fmt.Sprintf("%gs per point, no warm-up", s.DurationS)
	}
	return fmt.Sprintf("%gs per point (first %gs warm-up, dropped)", s.DurationS, s.WarmupS)
}

// serverRows name the database server and the settings that shape its wire; files from
// before PostgreSQL only have MariaDB's version.
func serverRows(e result.Environment) [][]string {
	f := e.Server
	if f == nil {
		return [][]string{{"MariaDB", orDash(e.MariaDBVersion)}}
	}
	name := map[string]string{"mariadb": "MariaDB", "postgres": "PostgreSQL"}[f.Engine]
	if name == "" {
		name = orDash(f.Engine)
	}
	version := orDash(f.Version)
	if f.External {
		version += " (external: not started by wirelab, no server CPU measured)"
	}
	rows := [][]string{{name, version}}
	if len(f.Settings) > 0 {
		set := make([]string, len(f.Settings))
		for i, st := range f.Settings {
			set[i] = st.Name + " = " + st.Value
		}
		rows = append(rows, []string{"server settings", strings.Join(set, ", ")})
	}
	return rows
}

// congestionText names the congestion control and, for BBR, what it does to a reply on a
// delayed link: without the fq qdisc the TCP stack paces BBR's sends itself at a rate
// derived from its bandwidth estimate, which a request/reply flow keeps low, so a reply of
// several segments leaves over a part of the round trip instead of at once.
func congestionText(cc string) string {
	if cc == "bbr" {
		return "bbr (paces its sends: a reply of several segments leaves spread over time, not at once as with cubic; " +
			"on a delayed link that adds to the round trip)"
	}
	return cc
}
