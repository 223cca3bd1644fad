package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/result"
)

// quickDir copies the captured `make run` results (internal/model/testdata) into a temp
// directory, so the chart predict writes lands there.
func quickDir(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../model/testdata/quick/results.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runPredictCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	p := &Process{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }}
	code = Main(append([]string{"predict"}, args...), p)
	return code, o.String(), e.String()
}

func TestPredictTables(t *testing.T) {
	dir := quickDir(t)
	code, out, errs := runPredictCmd(t, "--from", dir, "--threads", "1,64,2048", "--server-cores", "48")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"1gbit 0.15ms TPS", "10gbit 0.15ms TPS", "Profile plain", "Profile compression",
		"server 48 cores, client 48 cores", "downlink 100%", "On those points the model is off by"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// 1 Gbit/s over ~42 KB per transaction: the issue's ≈ 2,970 TPS ceiling.
	if !strings.Contains(out, "| 2048 | 2979 |") {
		t.Errorf("2048 threads at 1gbit should sit at the link's ceiling, 2979 TPS:\n%s", out)
	}
	for _, f := range []string{"predict-tps.png", "predict-tps.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("chart %s: %v", f, err)
		}
	}
}

func TestPredictJSONAndSeries(t *testing.T) {
	dir := quickDir(t)
	code, out, errs := runPredictCmd(t, "--from", dir, "--series", "20mbit,unlimited", "--rate", "50mbit", "--rtt", "40ms", "--threads", "1,8", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got predictOut
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(got.Profiles) != 1 || got.Profiles[0].Profile != "plain" {
		t.Fatalf("profiles %+v, want only plain (the compressed series were not asked for)", got.Profiles)
	}
	l := got.Profiles[0].Links[0]
	if l.RateBps != 50e6 || l.RTTMs != 40 || len(l.Rows) != 2 {
		t.Fatalf("link %+v, want 50mbit, 40 ms, 2 rows", l)
	}
	// 16 round trips of 40 ms: one thread manages at most 1/0.64 s.
	if tps := l.Rows[0].TPS; tps > 1/0.64 || tps < 1.4 || l.Rows[0].Bottleneck != "latency" {
		t.Errorf("1 thread at 40 ms: %+v, want just under 1.56 TPS, latency-bound", l.Rows[0])
	}
}

func TestPredictCrossover(t *testing.T) {
	code, out, errs := runPredictCmd(t, "--from", quickDir(t), "--crossover", "compression", "--threads", "2048", "--server-cores", "48")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "2048 threads: compression pays below") || !strings.Contains(out, "gbit") {
		t.Errorf("want a crossover rate in gbit at 2048 threads:\n%s", out)
	}
}

func TestPredictRefusesBadInput(t *testing.T) {
	dir := quickDir(t)
	old := t.TempDir()
	run := &result.Run{Schema: 1, Study: "bandwidth", Spec: result.Spec{Threads: []int{1}},
		Points: []result.Point{{Study: "bandwidth", Series: "20mbit", Threads: 1, TPS: 60}}}
	if err := result.Write(old, run); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no --from", []string{"--rate", "1gbit"}, 2, "--from is required"},
		{"bad rate", []string{"--from", dir, "--rate", "fast"}, 2, "--rate: bad rate \"fast\""},
		{"rate beyond range", []string{"--from", dir, "--rate", "100tbit"}, 2, "between 1bit and 10tbit"},
		{"bad rtt", []string{"--from", dir, "--rtt", "40"}, 2, "--rtt \"40\": want a duration"},
		{"too many cores", []string{"--from", dir, "--server-cores", "5000"}, 2, "--server-cores 5000: want a whole number of cores from 1 to 1024"},
		{"negative cores", []string{"--from", dir, "--client-cores", "-2"}, 2, "--client-cores -2"},
		{"bad crossover", []string{"--from", dir, "--crossover", "tls"}, 2, "--crossover \"tls\": want compression"},
		{"bad threads", []string{"--from", dir, "--threads", "0"}, 2, "--threads"},
		{"unknown series", []string{"--from", dir, "--series", "1gbit"}, 2, "--series \"1gbit\": not in"},
		{"--against with --rate", []string{"--from", dir, "--against", dir, "--rate", "1gbit"}, 2, "--against predicts each point of the run on its own link, at its own thread count, on the lab's machine, so --rate would be ignored"},
		{"--against with --threads", []string{"--from", dir, "--against", dir, "--threads", "8"}, 2, "so --threads would be ignored: drop it (e.g. wirelab predict --from results/r20 --against results/r5)"},
		{"--against with --rtt and --out", []string{"--from", dir, "--against", dir, "--rtt", "2ms", "--out", dir}, 2, "so --out would be ignored"},
		{"--crossover with rates", []string{"--from", dir, "--crossover", "compression", "--rate", "1gbit,10gbit"}, 2, "--crossover searches the link rate itself and draws no chart, so --rate would be ignored"},
		{"--json with --out", []string{"--from", dir, "--json", "--out", dir}, 2, "--json prints the prediction and draws no chart, so --out would be ignored"},
		{"older schema", []string{"--from", old}, 1, "a run of this version records them: wirelab study bandwidth"},
		{"older schema, one series", []string{"--from", old, "--series", "20mbit"}, 1, "a run of this version records them: wirelab study bandwidth"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := runPredictCmd(t, c.args...)
			if code != c.code || !strings.Contains(errs, c.want) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, errs, c.code, c.want)
			}
		})
	}
}
