package docscheck

import (
	"reflect"
	"testing"
)

const sample = "# A page\n\n" +
	"See [the lab](lab.md), [its wire](lab.md#the-wire), ![chart](img/x.png) and [up](#a-page).\n" +
	"A URL [k6](https://k6.io) and `[not a link](nowhere.md)` in code.\n" +
	"```\n[inside a block](block.md)\nwirelab run --rate 20mbit\n```\n" +
	"[ref]: docs/ref.md\n" +
	"## `wirelab study sync` — costs: 1 RTT!\n" +
	"## Again\n## Again\n"

func TestLinks(t *testing.T) {
	var got []string
	for _, l := range Links(sample) {
		got = append(got, l.Target)
	}
	want := []string{"lab.md", "lab.md#the-wire", "img/x.png", "#a-page", "https://k6.io", "docs/ref.md"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Links = %q, want %q", got, want)
	}
	l := Links(sample)[1]
	if l.File() != "lab.md" || l.Anchor() != "the-wire" || l.External() || l.Line != 3 {
		t.Errorf("%+v: file %q anchor %q external %v", l, l.File(), l.Anchor(), l.External())
	}
	if !Links(sample)[4].External() {
		t.Error("https link not external")
	}
}

func TestAnchors(t *testing.T) {
	got := Anchors(sample)
	for _, a := range []string{"a-page", "wirelab-study-sync--costs-1-rtt", "again", "again-1"} {
		if !got[a] {
			t.Errorf("no anchor %q in %v", a, got)
		}
	}
	if got["inside-a-block"] || len(got) != 4 {
		t.Errorf("anchors %v, want exactly 4", got)
	}
}

func TestPaths(t *testing.T) {
	md := "Run scripts/bench-link.sh (docs/bench/link.md); `internal/model/shaper.go`, not\n" +
		"github.com/x/internal/y.go, ./internal/..., internal/<pkg>, docs/bench-*.md or docs/x.md.\n"
	var got []string
	for _, p := range Paths(md) {
		got = append(got, p.Target)
	}
	want := []string{"scripts/bench-link.sh", "docs/bench/link.md", "internal/model/shaper.go", "docs/x.md"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Paths = %q, want %q", got, want)
	}
}

func TestCodeLines(t *testing.T) {
	got := CodeLines(sample)
	if len(got) != 2 || got[1].Target != "wirelab run --rate 20mbit" || got[1].Line != 7 {
		t.Errorf("CodeLines = %+v", got)
	}
}
