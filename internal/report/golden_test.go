package report

import (
	"bytes"
	"flag"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var fixtures = []struct {
	name   string
	run    func() *result.Run
	charts []string
}{
	{"run", runFixture, []string{"run-tps", "run-other-links"}},
	{"run-clients", runClientsFixture, []string{"run-tps", "run-other-links"}},
	{"run-pgbench", runPgbenchFixture, []string{"run-tps", "run-other-links"}},
	{"bandwidth", bandwidthFixture, []string{"bandwidth-n1", "bandwidth-wire", "bandwidth-n2-slow", "bandwidth-n2-fast", "bandwidth-n3-slow", "bandwidth-n3-fast", "bandwidth-other-links"}},
	{"bandwidth-repeat", bandwidthRepeatFixture, []string{"bandwidth-n1", "bandwidth-n2-slow", "bandwidth-n3-slow", "bandwidth-other-links"}},
	{"bandwidth-postgres", bandwidthPostgresFixture, []string{"bandwidth-n1", "bandwidth-wire", "bandwidth-n2-slow", "bandwidth-n2-fast", "bandwidth-n3-slow", "bandwidth-n3-fast", "bandwidth-other-links"}},
	{"transport", transportFixture, []string{"transport-pct"}},
	{"quick-5s", quickFixture, []string{"bandwidth-n1", "bandwidth-wire", "bandwidth-n2-slow", "bandwidth-n2-fast", "bandwidth-other-links"}},
	{"replication", replicationFixture, []string{"replication-lag-rtt", "replication-lag-time-lag-vs-rtt", "replication-max-load",
		"replication-max-load-search", "replication-lag-time-max-load", "replication-bandwidth"}},
	{"sync", syncFixture, []string{"sync-commit", "sync-tps"}},
	{"calibrate", calibrateFixture, nil},
	{"replay", replayFixture, []string{"replay-txn"}},
}

// replayFixture is a real `wirelab replay` of a captured sysbench general log (MariaDB,
// 4 sessions, 204 statements) onto a dump of its tables, plain and compressed at 0 and
// 20 ms RTT, --speed max, --checksums, on a 2-core box shared with other work.
func replayFixture() *result.Run {
	r, err := result.ReadFile(filepath.Join("testdata", "replay-results.json"))
	if err != nil {
		panic(err)
	}
	return r
}

// syncFixture is a real `study sync` (MariaDB, async and both semi-sync wait points at 0
// and 100 ms RTT, 1 thread) on a 2-core box shared with other work.
func syncFixture() *result.Run {
	r, err := result.ReadFile(filepath.Join("testdata", "sync-results.json"))
	if err != nil {
		panic(err)
	}
	return r
}

// quickFixture is a real `make run` (the quick bandwidth study: 5 s points, 1 s warm-up,
// 20mbit vs unlimited, plain vs compression) on a 2-core box: two batches a point, so
// every ratio is too short to tell and the findings say what was seen.
func quickFixture() *result.Run {
	r, err := result.ReadFile(filepath.Join("testdata", "quick-5s-results.json"))
	if err != nil {
		panic(err)
	}
	return r
}

// dataURI stands in for chart bytes in the HTML golden: the PNGs are checked on their own.
var dataURI = regexp.MustCompile(`data:image/png;base64,[A-Za-z0-9+/=]+`)

func renderFixture(t *testing.T, run *result.Run) string {
	t.Helper()
	dir := t.TempDir()
	if err := Render(dir, run); err != nil {
		t.Fatalf("Render: %v", err)
	}
	return dir
}

func TestGolden(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			dir := renderFixture(t, f.run())
			md := readFile(t, filepath.Join(dir, "report.md"))
			html := dataURI.ReplaceAllString(readFile(t, filepath.Join(dir, "report.html")), "data:image/png;base64,PNG")
			compareGolden(t, filepath.Join("testdata", f.name+".md"), md)
			compareGolden(t, filepath.Join("testdata", f.name+".html"), html)
		})
	}
}

func TestChartsWritten(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			dir := renderFixture(t, f.run())
			pngs, _ := filepath.Glob(filepath.Join(dir, "*.png"))
			if len(pngs) != len(f.charts) {
				t.Errorf("%d PNG files, want %d (%v)", len(pngs), len(f.charts), pngs)
			}
			md := readFile(t, filepath.Join(dir, "report.md"))
			for _, name := range f.charts {
				b, err := os.ReadFile(filepath.Join(dir, name+".png"))
				if err != nil {
					t.Fatalf("chart %s: %v", name, err)
				}
				img, err := png.Decode(bytes.NewReader(b))
				if err != nil {
					t.Fatalf("chart %s does not decode as PNG: %v", name, err)
				}
				if w, h := img.Bounds().Dx(), img.Bounds().Dy(); w < 800 || h < 400 || w > 2000 || h > 1200 {
					t.Errorf("chart %s is %dx%d, want about 864x460", name, w, h)
				}
				svg := readFile(t, filepath.Join(dir, name+".svg"))
				if !strings.Contains(svg, "<svg") || !strings.Contains(svg, "</svg>") {
					t.Errorf("chart %s.svg is not an SVG document", name)
				}
				if !strings.Contains(md, "]("+name+".png)") {
					t.Errorf("report.md does not show %s.png", name)
				}
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run: go test ./internal/report -update)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs from the golden file at line %d:\n got: %q\nwant: %q\n(run: go test ./internal/report -update, then review the diff)", path, i+1, g, w)
			}
		}
	}
}
