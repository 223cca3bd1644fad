package docscheck

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Link is one markdown link or image: where it points, and the line it is on (1-based).
type Link struct {
	Target string
	Line   int
}

// File is the target without its anchor; Anchor is what follows '#', "" when none.
func (l Link) File() string   { f, _, _ := strings.Cut(l.Target, "#"); return f }
func (l Link) Anchor() string { _, a, _ := strings.Cut(l.Target, "#"); return a }

// External reports whether the link leaves the repository (a URL or a mail address).
func (l Link) External() bool {
	t := strings.ToLower(l.Target)
	return strings.Contains(t, "://") || strings.HasPrefix(t, "mailto:")
}

var (
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+(\S+)`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
)

// lines splits md into its lines, marking those inside fenced code blocks.
func lines(md string) (text []string, fenced []bool) {
	in := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			text, fenced = append(text, l), append(fenced, true)
			in = !in
			continue
		}
		text, fenced = append(text, l), append(fenced, in)
	}
	return text, fenced
}

// Links returns the links of md outside code blocks and code spans.
func Links(md string) []Link {
	var out []Link
	text, fenced := lines(md)
	for i, l := range text {
		if fenced[i] {
			continue
		}
		l = codeSpan.ReplaceAllString(l, "")
		for _, m := range inlineLink.FindAllStringSubmatch(l, -1) {
			out = append(out, Link{Target: m[1], Line: i + 1})
		}
		if m := refLink.FindStringSubmatch(l); m != nil {
			out = append(out, Link{Target: m[1], Line: i + 1})
		}
	}
	return out
}

// Anchors returns the anchors GitHub gives md's headings: the text lowercased, punctuation
// dropped, spaces as hyphens, a repeated heading suffixed -1, -2, ...
func Anchors(md string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	text, fenced := lines(md)
	for i, l := range text {
		if fenced[i] || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		if h == "" || len(l)-len(strings.TrimLeft(l, "#")) > 6 || !strings.HasPrefix(strings.TrimLeft(l, "#"), " ") {
			continue
		}
		s := Slug(h)
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// Slug is the anchor GitHub gives a heading's text.
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// repoPath is a path into the repository as the docs name one in their text.
var repoPath = regexp.MustCompile(`(?:^|[\s(\x60"'])((?:docs|scripts|internal|cmd|test)/[A-Za-z0-9_./@-]*[A-Za-z0-9_])`)

// Paths returns the repository paths md names anywhere (text, code spans, code blocks),
// with their lines; a path with a placeholder or a glob in it is left out.
func Paths(md string) []Link {
	var out []Link
	for i, l := range strings.Split(md, "\n") {
		for _, m := range repoPath.FindAllStringSubmatchIndex(l, -1) {
			p, next := l[m[2]:m[3]], l[m[3]:]
			// the match stopped short of a placeholder or a glob (docs/bench-*.md,
			// internal/<pkg>), not at the path's end or a sentence's full stop
			cut := next != "" && (strings.ContainsRune("<*{$-/", rune(next[0])) ||
				next[0] == '.' && len(next) > 1 && !strings.ContainsRune(" )\"'`,;:", rune(next[1])))
			if cut || strings.Contains(p, "...") || strings.Contains(p, "//") {
				continue
			}
			out = append(out, Link{Target: p, Line: i + 1})
		}
	}
	return out
}

// CodeLines returns the lines of md's fenced code blocks, with their line numbers.
func CodeLines(md string) []Link {
	var out []Link
	text, fenced := lines(md)
	for i, l := range text {
		if fenced[i] && !strings.HasPrefix(strings.TrimSpace(l), "```") {
			out = append(out, Link{Target: l, Line: i + 1})
		}
	}
	return out
}
