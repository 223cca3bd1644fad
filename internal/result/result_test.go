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
	for _, key := range []string{`"schema": 1`, `"link_rate_bps": 20000000`, `"wire_bytes_per_s_down"`, `"bottleneck": "network"`, `"seconds"`} {
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
	if err := os.WriteFile(filepath.Join(dir, "results.json"), []byte(`{"schema": 2, "points": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), "schema 2") {
		t.Errorf("schema 2 read as %v", err)
	}
}
