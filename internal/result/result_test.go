package result

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteReadRoundTripAndCSV(t *testing.T) {
	dir := t.TempDir()
	in := &Run{Study: "run", RunID: "abc123", Spec: Spec{Workload: "oltp_read_only", Threads: []int{1, 8}},
		Points: []Point{{Study: "run", Series: "20mbit+compression", LinkRateBps: 20_000_000, Compression: true,
			Threads: 8, TPS: 101.5, WireBytesPerSDown: 2.3e6, Bottleneck: "network",
			Seconds: []Second{{T: 1, TPS: 99, Warmup: true}, {T: 2, TPS: 102}}}}}
	if err := Write(dir, in); err != nil {
		t.Fatal(err)
	}
	out, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if out.Schema != Schema || len(out.Points) != 1 || out.Points[0].TPS != 101.5 || len(out.Points[0].Seconds) != 2 {
		t.Errorf("round trip lost data: %+v", out)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "results.json"))
	for _, key := range []string{`"schema": 2`, `"link_rate_bps": 20000000`, `"wire_bytes_per_s_down"`, `"bottleneck": "network"`, `"seconds"`} {
		if !strings.Contains(string(raw), key) {
			t.Errorf("results.json lacks %s", key)
		}
	}
	f, err := os.Open(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 2 || len(rows[0]) != len(rows[1]) {
		t.Fatalf("csv rows %v, %v", rows, err)
	}
	if rows[1][1] != "20mbit+compression" || rows[1][9] != "8" {
		t.Errorf("csv row %v", rows[1])
	}
}

func TestReadRefusesAnotherSchema(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "results.json"), []byte(`{"schema": 3, "points": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), "schema 3") {
		t.Errorf("schema 3 read as %v", err)
	}
}

// A schema-1 file from a real replication run reads as schema 2 with its figures typed.
func TestReadMigratesSchema1Replication(t *testing.T) {
	r, err := Read("testdata/schema1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Schema != Schema {
		t.Errorf("schema %d after migration, want %d", r.Schema, Schema)
	}
	var ok, bounded int
	for _, p := range r.Points {
		if p.Replication == nil {
			t.Fatalf("point %s/%s has no replication figures", p.Series, p.Channel)
		}
		if p.Replication.ChecksumOK {
			ok++
		}
		if p.Replication.Bounded {
			bounded++
		}
	}
	if ok != len(r.Points) || bounded == 0 || bounded == len(r.Points) {
		t.Errorf("checksum ok %d, bounded %d of %d points: booleans not carried over", ok, bounded, len(r.Points))
	}
	if p := r.Points[0]; p.Replication.LagMaxS <= 0 || p.Replication.RTTMs != 0 && p.Replication.RTTMs < 1 {
		t.Errorf("first point's lag/rtt not migrated: %+v", p.Replication)
	}
}

func TestBracketAndMaxLoads(t *testing.T) {
	for _, tc := range []struct {
		name   string
		probes []Probe
		lo, hi float64
	}{
		{"climb then bisect", []Probe{{Load: 300, OK: true}, {Load: 600, OK: true}, {Load: 1200, OK: false}, {Load: 900, OK: true}, {Load: 1050, OK: false}}, 900, 1050},
		{"a failed confirmation moves the limit down", []Probe{{Load: 300, OK: true}, {Load: 600, OK: true}, {Load: 1200, OK: false}, {Load: 900, OK: true}, {Load: 900, OK: false}}, 600, 900},
		{"a pass above a failure does not count", []Probe{{Load: 300, OK: true}, {Load: 600, OK: false}, {Load: 900, OK: true}}, 300, 600},
		{"never failed", []Probe{{Load: 300, OK: true}, {Load: 600, OK: true}}, 600, 0},
		{"never passed", []Probe{{Load: 300, OK: false}}, 0, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if lo, hi := Bracket(tc.probes); lo != tc.lo || hi != tc.hi {
				t.Errorf("Bracket = %v, %v; want %v, %v", lo, hi, tc.lo, tc.hi)
			}
		})
	}
	pt := func(ch string, q float64, ok bool) Point {
		return Point{Series: MaxLoadSeries, Channel: ch, QPS: q * 0.99,
			Replication: &ReplicationStats{TargetQPS: q, Bounded: ok, ChecksumOK: true}}
	}
	pts := []Point{pt("tunnel", 600, true), pt("tunnel", 1200, false), pt("tunnel", 1140, true), pt("tunnel", 1140, true),
		pt("native", 300, true), pt("native", 600, false), {Series: "bandwidth", Channel: "native"}}
	es := MaxLoads(pts)
	if len(es) != 2 || es[0].Channel != "native" || es[1].Channel != "tunnel" {
		t.Fatalf("edges %+v", es)
	}
	if e := es[1]; e.Limit != 1140 || e.FirstFailed != 1200 || e.Passes != 2 || e.At == nil || e.Failed == nil ||
		e.Probes != 4 || e.Width() < 0.052 || e.Width() > 0.053 {
		t.Errorf("tunnel edge %+v (width %v)", e, e.Width())
	}
}

// The fit charges each probe to the load it delivered: two probes at 700 and two at 720
// QPS split by what they delivered (690 and 700 passed, 745 and 760 failed), so the limit
// lies between the highest delivered pass and the lowest delivered failure, and the
// interval is narrower than the same outcomes charged to their targets, where a pass and a
// failure share each load.
func TestFitLimitChargesDelivered(t *testing.T) {
	probes := []Probe{{Load: 600, Delivered: 604, OK: true}, {Load: 700, Delivered: 690, OK: true}, {Load: 700, Delivered: 745},
		{Load: 720, Delivered: 700, OK: true}, {Load: 720, Delivered: 760}, {Load: 800, Delivered: 797}}
	targets := make([]Probe, len(probes))
	for i, p := range probes {
		targets[i] = Probe{Load: p.Load, OK: p.OK}
	}
	d, tg := FitLimit(probes), FitLimit(targets)
	if !d.OK || !tg.OK || d.Est <= 700 || d.Est >= 745 || d.Hi-d.Lo >= tg.Hi-tg.Lo {
		t.Errorf("fit on delivered %+v, on targets %+v: want the first between 700 and 745 and narrower", d, tg)
	}
}

// A probe that failed to run is charged to its target: its QPS (what sysbench did before
// it failed) says nothing about the load it was asked to apply.
func TestMaxLoadsChargesAFailedProbeToItsTarget(t *testing.T) {
	pt := func(q, qps float64, ok, failed bool) Point {
		return Point{Series: MaxLoadSeries, Channel: "native", QPS: qps, Failed: failed,
			Replication: &ReplicationStats{TargetQPS: q, Bounded: ok, ChecksumOK: true}}
	}
	es := MaxLoads([]Point{pt(300, 301, true, false), pt(600, 597, true, false), pt(900, 40, false, true)})
	if len(es) != 1 || es[0].Est <= 600 || es[0].Est >= 900 {
		t.Errorf("edges %+v: want one fitted between 600 and 900", es)
	}
}

// The link summary round-trips next to the raw read-back, and a file without it reads with
// none (the report then falls back on link_as_applied).
func TestEnvironmentLinkRoundTrip(t *testing.T) {
	dir := t.TempDir()
	in := &Run{Environment: Environment{Shaper: "htb", LinkAsReadBack: "to-server: qdisc htb 1: root",
		Link: []LinkDirection{{Toward: "server", Iface: "to-server", Shaper: "htb", RateBps: 20_000_000, BurstBytes: 25_000, QueuePackets: 100}}},
		Points: []Point{{Study: "run", TPS: 1}}}
	if err := Write(dir, in); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "results.json"))
	for _, key := range []string{`"link_as_read_back": "to-server: qdisc htb 1: root"`, `"burst_bytes": 25000`, `"queue_packets": 100`, `"toward": "server"`} {
		if !strings.Contains(string(raw), key) {
			t.Errorf("results.json lacks %s", key)
		}
	}
	out, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Environment.Link) != 1 || out.Environment.Link[0] != in.Environment.Link[0] {
		t.Errorf("link read back as %+v", out.Environment.Link)
	}
	old := strings.Replace(string(raw), `"link": [`, `"unused": [`, 1)
	if err := os.WriteFile(filepath.Join(dir, "results.json"), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := Read(dir); err != nil || out.Environment.Link != nil {
		t.Errorf("file without link: %v, %+v", err, out.Environment.Link)
	}
}

// A pgbench point records its driver, latency spread and per-second mean latency; a point
// without them (every older file) writes none of these keys, so schema 2 still holds.
func TestDriverFieldsAreOptional(t *testing.T) {
	dir := t.TempDir()
	in := &Run{Study: "run", Spec: Spec{Workload: "select-only", Driver: "pgbench", Scale: 10},
		Points: []Point{{Study: "run", Workload: "select-only", Driver: "pgbench", Threads: 10, TPS: 495,
			LatAvgMs: 20.2, LatStddevMs: 0.4, Seconds: []Second{{T: 1, TPS: 495, LatAvgMs: 20.2}}}}}
	if err := Write(dir, in); err != nil {
		t.Fatal(err)
	}
	out, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := out.Points[0]
	if p.Driver != "pgbench" || p.LatStddevMs != 0.4 || p.Seconds[0].LatAvgMs != 20.2 || out.Spec.Scale != 10 || out.Spec.Driver != "pgbench" {
		t.Errorf("round trip lost the driver's fields: %+v, spec %+v", p, out.Spec)
	}
	rows := readCSV(t, dir)
	if d, sd := csvField(t, rows, "driver"), csvField(t, rows, "lat_stddev_ms"); d != "pgbench" || sd != "0.4" {
		t.Errorf("csv driver and stddev columns %q %q", d, sd)
	}

	in.Spec.Driver, in.Spec.Scale = "", 0
	in.Points[0].Driver, in.Points[0].LatStddevMs, in.Points[0].Seconds[0].LatAvgMs = "", 0, 0
	if err := Write(dir, in); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "results.json"))
	for _, key := range []string{`"driver"`, `"scale"`, `"lat_stddev_ms"`, `"pgbench_version"`, `"lat_avg_ms": 0`} {
		if strings.Contains(string(raw), key) {
			t.Errorf("a point without a driver's fields writes %s", key)
		}
	}
}

func readCSV(t *testing.T, dir string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 || len(rows[0]) != len(rows[1]) {
		t.Fatalf("csv rows %v, %v", rows, err)
	}
	return rows
}

// csvField is the first data row's value in the named column.
func csvField(t *testing.T, rows [][]string, name string) string {
	t.Helper()
	for i, h := range rows[0] {
		if h == name {
			return rows[1][i]
		}
	}
	t.Fatalf("no csv column %q in %v", name, rows[0])
	return ""
}
