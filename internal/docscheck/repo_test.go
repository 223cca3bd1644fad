package docscheck

import (
	"bytes"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/cli"
	"github.com/wirelab/wirelab/internal/execx"
)

// root is the repository, from this package's directory.
const root = "../.."

// markdownFiles returns every markdown file of the repository but test fixtures (a
// golden report links charts its test does not write) and build output.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "bin", "results", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".md") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 10 {
		t.Fatalf("found %d markdown files under %s: not the repository?", len(out), root)
	}
	return out
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func rel(p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return r
}

// Every link of every markdown file leads to a file or directory of the repository, and an
// anchor to a heading of the page it names.
func TestLinksResolve(t *testing.T) {
	for _, f := range markdownFiles(t) {
		md := read(t, f)
		for _, l := range Links(md) {
			if l.External() {
				continue
			}
			target := f
			if l.File() != "" {
				target = filepath.Join(filepath.Dir(f), l.File())
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s:%d links %s, which does not exist", rel(f), l.Line, l.Target)
					continue
				}
			}
			if a := l.Anchor(); a != "" && strings.HasSuffix(target, ".md") && !Anchors(read(t, target))[a] {
				t.Errorf("%s:%d links %s: %s has no heading with anchor #%s", rel(f), l.Line, l.Target, rel(target), a)
			}
		}
	}
}

// Every repository path a markdown file names (docs/..., scripts/..., internal/..., cmd/...,
// test/...) exists.
func TestPathsExist(t *testing.T) {
	for _, f := range markdownFiles(t) {
		for _, p := range Paths(read(t, f)) {
			if _, err := os.Stat(filepath.Join(root, p.Target)); err != nil {
				t.Errorf("%s:%d names %s, which does not exist", rel(f), p.Line, p.Target)
			}
		}
	}
}

// Every page under docs/ is linked from the README, so a newcomer can find it.
func TestDocsLinkedFromReadme(t *testing.T) {
	linked := map[string]bool{}
	for _, l := range Links(read(t, filepath.Join(root, "README.md"))) {
		if !l.External() {
			linked[filepath.Clean(l.File())] = true
		}
	}
	var pages []string
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, rel(p))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no pages under docs/")
	}
	for _, p := range pages {
		if !linked[p] {
			t.Errorf("%s is not linked from README.md's index", p)
		}
	}
}

// The README stays a landing page.
func TestReadmeIsShort(t *testing.T) {
	if n := strings.Count(read(t, filepath.Join(root, "README.md")), "\n"); n > 200 {
		t.Errorf("README.md has %d lines, want at most 200: move the detail to its page under docs/", n)
	}
}

// The README's report excerpt is a real report's table as today's code draws it: every row
// is in the golden report of that run.
func TestReadmeReportExcerpt(t *testing.T) {
	readme := read(t, filepath.Join(root, "README.md"))
	_, section, ok := strings.Cut(readme, "## What a report looks like")
	if !ok {
		t.Fatal(`README.md has no "## What a report looks like"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	golden := read(t, filepath.Join(root, "internal/report/testdata/quick-5s.md"))
	rows := 0
	for _, l := range strings.Split(section, "\n") {
		if strings.HasPrefix(l, "|") {
			rows++
			if !strings.Contains(golden, l+"\n") {
				t.Errorf("README's report excerpt has %q, which internal/report/testdata/quick-5s.md does not", l)
			}
		}
	}
	if rows == 0 {
		t.Error("README's report excerpt has no table")
	}
}

// helpOf runs `wirelab ARGS --help` in memory and returns what it printed.
func helpOf(t *testing.T, args []string) string {
	t.Helper()
	var out bytes.Buffer
	f := &execx.Fake{}
	p := &cli.Process{Stdout: &out, Stderr: &out, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" },
		Runner: f, Logger: slog.New(slog.DiscardHandler), StateDir: t.TempDir(), LockDir: t.TempDir(),
		Self: "/nonexistent/wirelab", IsRoot: func() bool { return false }}
	if code := cli.Main(append(append([]string(nil), args...), "--help"), p); code != 0 {
		t.Fatalf("wirelab %s --help: exit %d\n%s", strings.Join(args, " "), code, out.String())
	}
	if len(f.Calls) > 0 {
		t.Fatalf("wirelab %s --help ran commands: %v", strings.Join(args, " "), f.Lines())
	}
	return out.String()
}

// helpEntry is what one command's --help lists.
type helpEntry struct {
	flags  map[string]bool
	listed bool
}

// flagsOf returns the flags of the command an invocation names: its first word, or its
// first two when the first is a group (study, link, tunnel) whose help lists no flags.
func flagsOf(t *testing.T, cache map[string]helpEntry, words []string) (string, map[string]bool) {
	t.Helper()
	for n := 1; ; n++ {
		key := strings.Join(words[:n], " ")
		e, ok := cache[key]
		if !ok {
			e.flags, e.listed = HelpFlags(helpOf(t, words[:n]))
			cache[key] = e
		}
		if e.listed || n == len(words) {
			return key, e.flags
		}
	}
}

// Every `wirelab ...` line in a code block of the README or a docs page names only flags
// its command has, as the command's own --help lists them.
func TestUsageFlagsExist(t *testing.T) {
	files := []string{filepath.Join(root, "README.md")}
	for _, f := range markdownFiles(t) {
		if strings.HasPrefix(rel(f), "docs"+string(filepath.Separator)) {
			files = append(files, f)
		}
	}
	cache := map[string]helpEntry{}
	checked := 0
	for _, f := range files {
		for _, cl := range CodeLines(read(t, f)) {
			for _, inv := range Invocations(cl.Target) {
				if len(inv.Words) == 0 {
					t.Errorf("%s:%d: %q names no command", rel(f), cl.Line, inv.Text)
					continue
				}
				cmd, flags := flagsOf(t, cache, inv.Words)
				for _, fl := range inv.Flags {
					if !flags[fl] {
						t.Errorf("%s:%d: `wirelab %s` has no --%s (in %q)", rel(f), cl.Line, cmd, fl, inv.Text)
					}
				}
				checked++
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d usage lines: the README's usage block was not found?", checked)
	}
}

// Every package under internal/ has its paragraph in docs/architecture.md.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	arch := read(t, filepath.Join(root, "docs/architecture.md"))
	entries, err := os.ReadDir(filepath.Join(root, "internal"))
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, e := range entries {
		if e.IsDir() && !strings.Contains(arch, "### `internal/"+e.Name()+"`\n") {
			missing = append(missing, e.Name())
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("docs/architecture.md has no \"### `internal/NAME`\" paragraph for %s", strings.Join(missing, ", "))
	}
}
