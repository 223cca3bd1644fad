package docscheck

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/benchpage.golden.md from scripts/benchpage.sh")

// fakeMachine writes the /proc and /sys files benchpage.sh reads, and the times bench_now
// hands out one by one.
func fakeMachine(t *testing.T, times ...string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"proc/cpuinfo":              "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Processor @ 2.80GHz\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) Processor @ 2.80GHz\n",
		"proc/loadavg":              "0.49 0.62 2.75 1/250 4242\n",
		"proc/sys/kernel/osrelease": "6.18.44-fc-v669\n",
		"sys/devices/system/cpu/cpuidle/current_driver": "haltpoll\n",
		"times": strings.Join(times, "\n") + "\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// benchScript runs body after sourcing scripts/benchpage.sh on the fake machine, with the
// page at OUT; it returns the script's exit status error and its output.
func benchScript(t *testing.T, fake, out, body string) (string, error) {
	t.Helper()
	lib, err := filepath.Abs(filepath.Join(root, "scripts/benchpage.sh"))
	if err != nil {
		t.Fatal(err)
	}
	script := `set -euo pipefail
BENCH_PROC=$FAKE/proc BENCH_SYS=$FAKE/sys
source "$LIB"
bench_now() { local t; t=$(head -1 "$FAKE/times"); sed -i 1d "$FAKE/times"; echo "$t"; }
# part NAME [LOAD]: a part's table; LOAD is the load average it leaves behind
part() { echo; echo "| case | TPS |"; echo "|---|---:|"; echo "| $1 | 42.0 |"; echo; echo "a line after it"; echo; echo
	[[ -z ${2:-} ]] || echo "$2 1/250 4242" >"$FAKE/proc/loadavg"; }
export PARTS=6 RELAY_ROWS="socat,tunnel mux on"
BENCH_CMD=$(bench_command PARTS LAB_ROWS RELAY_ROWS -- scripts/bench-fake.sh 3s)
bench_page "$OUT" scripts/bench-fake.sh "bench-fake: a bench on a fake machine"
` + body
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), "FAKE="+fake, "LIB="+lib, "OUT="+out)
	b, err := cmd.CombinedOutput()
	return string(b), err
}

// The page benchpage.sh writes: sections in order of their ids whatever order the parts
// ran in, a part run again replacing its section, the command with its knobs, the date
// across midnight, the machine, and the load at the part's start and end.
func TestBenchPageWriter(t *testing.T) {
	fake := fakeMachine(t, "2026-12-01 22:47", "2026-12-01 23:01", "2026-12-01 23:44", "2026-12-02 00:05",
		"2026-12-02 00:10", "2026-12-02 00:20", "2026-12-02 00:30", "2026-12-02 00:31")
	out := filepath.Join(t.TempDir(), "bench", "fake.md")
	log, err := benchScript(t, fake, out, `
bench_section 6 "6. Relays" part first "3.95 3.00 2.80"
bench_section 3 "3. In the lab" part lab "6.57 4.00 3.00"
bench_section 10 "10. The tenth" part ten
bench_section 6 "6. Relays" part again "30.06 10.00 5.00"
`)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "benchpage.golden.md")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("page:\n%s\nwant (%s):\n%s", got, golden, want)
	}
	bp, err := ParseBenchPage(string(got))
	if err != nil {
		t.Fatalf("the page the writer wrote does not parse: %v", err)
	}
	var ids []string
	for _, s := range bp.Sections {
		ids = append(ids, s.ID)
	}
	if strings.Join(ids, " ") != "3 6 10" || !strings.Contains(bp.Sections[1].Body, "| again | 42.0 |") {
		t.Errorf("sections %v, section 6:\n%s", ids, bp.Sections[1].Body)
	}
	if !strings.Contains(log, "| lab | 42.0 |") {
		t.Errorf("a part's output is not printed as it runs:\n%s", log)
	}
}

// A part that fails leaves its section as it was and fails the script.
func TestBenchPageWriterKeepsTheLastTableOnFailure(t *testing.T) {
	fake := fakeMachine(t, "2026-12-01 22:47", "2026-12-01 23:01", "2026-12-01 23:10")
	out := filepath.Join(t.TempDir(), "fake.md")
	if log, err := benchScript(t, fake, out, `bench_section 3 "3. In the lab" part kept`); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	before, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	log, err := benchScript(t, fake, out, `broken() { echo "| half a table |"; false; echo "| never |"; }
bench_section 3 "3. In the lab" broken
echo "after the failed part"`)
	if err == nil || strings.Contains(log, "after the failed part") || strings.Contains(log, "never") {
		t.Errorf("a failed part did not stop the script (err %v):\n%s", err, log)
	}
	after, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf("the failed part changed the page:\n%s", after)
	}
}

func TestParseBenchPage(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "benchpage.golden.md"))
	if err != nil {
		t.Fatal(err)
	}
	bp, err := ParseBenchPage(string(good))
	if err != nil || bp.Script != "scripts/bench-fake.sh" || len(bp.Sections) != 3 {
		t.Fatalf("%+v, %v", bp, err)
	}
	s := bp.Sections[0]
	if s.ID != "3" || s.Heading != "3. In the lab" || s.Command != `PARTS=6 RELAY_ROWS="socat,tunnel mux on" scripts/bench-fake.sh 3s` ||
		s.Date != "2026-12-01 23:44 to 2026-12-02 00:05 UTC" ||
		s.Machine != "Intel(R) Xeon(R) Processor @ 2.80GHz, 2 cores, kernel 6.18.44-fc-v669, cpuidle haltpoll" ||
		s.Load != "3.95 3.00 2.80 at start, 6.57 4.00 3.00 at end" {
		t.Errorf("section %+v", s)
	}
	for name, edit := range map[string]func(string) string{
		"no title": func(p string) string { return strings.TrimPrefix(p, "# ") },
		"prose between": func(p string) string {
			return strings.Replace(p, "\n\n<!-- bench section 6", "\n\nA hand-written note.\n\n<!-- bench section 6", 1)
		},
		"no closing marker": func(p string) string { return strings.Replace(p, "<!-- end bench section 6 -->", "", 1) },
		"a header left out": func(p string) string { return regexp.MustCompile(`(?m)^- machine: .*\n`).ReplaceAllString(p, "") },
		"headers reordered": func(p string) string { return strings.Replace(p, "- date:", "- when:", 1) },
		"an empty body": func(p string) string {
			return regexp.MustCompile(`(?s)(at end\n\n).*?(<!-- end bench section 3)`).ReplaceAllString(p, "${1}${2}")
		},
		"a trailing blank": func(p string) string { return p + "\n" },
	} {
		if _, err := ParseBenchPage(edit(string(good))); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// Every page under docs/bench/ is in the writer's layout, names a script that writes it,
// and says in each section that this script made it; every bench script writes a page.
func TestBenchPagesKeepTheirLayout(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(root, "docs/bench/*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages under docs/bench: %v", err)
	}
	for _, p := range pages {
		bp, err := ParseBenchPage(read(t, p))
		if err != nil {
			t.Errorf("%s: %v", rel(p), err)
			continue
		}
		script := read(t, filepath.Join(root, bp.Script))
		if !strings.Contains(script, "bench_page "+rel(p)+" "+bp.Script+" \"") || !strings.Contains(script, "source scripts/benchpage.sh") {
			t.Errorf("%s names %s, which does not write it (want it to source scripts/benchpage.sh and call bench_page %s %s)", rel(p), bp.Script, rel(p), bp.Script)
		}
		for _, s := range bp.Sections {
			if !strings.Contains(s.Command, bp.Script) {
				t.Errorf("%s, section %s: command %q is not %s's", rel(p), s.ID, s.Command, bp.Script)
			}
		}
	}
	scripts, err := filepath.Glob(filepath.Join(root, "scripts/bench-*.sh"))
	if err != nil {
		t.Fatal(err)
	}
	writes := regexp.MustCompile(`(?m)^bench_page (docs/bench/[a-z-]+\.md) `)
	for _, s := range scripts {
		m := writes.FindStringSubmatch(read(t, s))
		if m == nil {
			t.Errorf("%s writes no page under docs/bench/ (bench_page)", rel(s))
			continue
		}
		if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
			t.Errorf("%s writes %s, which is not committed", rel(s), m[1])
		}
	}
}

// bench_quote replaces the block between its markers in a document outside docs/bench/
// and nothing else; a document without the block, or a part that fails, is left as it was.
func TestBenchQuote(t *testing.T) {
	fake := fakeMachine(t)
	doc := filepath.Join(t.TempDir(), "README.md")
	before := "# A page\n\nintro\n\n<!-- bench quote t: written by a test -->\n\n| a |\n|---|\n| old |\n\n<!-- end bench quote t -->\n\nafter\n"
	if err := os.WriteFile(doc, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	table := `table() { echo "| a |"; echo "|---|"; echo "| $1 |"; }
`
	if log, err := benchScript(t, fake, doc, table+`bench_quote "$OUT" t table new`); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	want := strings.Replace(before, "| old |", "| new |", 1)
	if got := read(t, doc); got != want {
		t.Errorf("after bench_quote:\n%s\nwant:\n%s", got, want)
	}
	for name, body := range map[string]string{
		"no such block": table + `bench_quote "$OUT" other table newer`,
		"a failed part": `broken() { echo "| half |"; false; echo "| never |"; }
bench_quote "$OUT" t broken`,
	} {
		if log, err := benchScript(t, fake, doc, body); err == nil {
			t.Errorf("%s: no error\n%s", name, log)
		}
		if got := read(t, doc); got != want {
			t.Errorf("%s: the document changed:\n%s", name, got)
		}
	}
}
