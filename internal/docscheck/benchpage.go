package docscheck

import (
	"fmt"
	"regexp"
	"strings"
)

// BenchSection is one section of a bench page as scripts/benchpage.sh writes it.
type BenchSection struct {
	ID, Heading                  string
	Command, Date, Machine, Load string
	Body                         string
}

// BenchPage is a bench page: its title, the script that writes it, and its sections.
type BenchPage struct {
	Title, Script string
	Sections      []BenchSection
}

var (
	benchTitle   = regexp.MustCompile("^# (.+)\n\nWritten by `(scripts/[a-z-]+\\.sh)`: each run replaces the sections of the parts it ran;\nearlier tables are in this page's git history\\.\n")
	benchStart   = regexp.MustCompile(`^<!-- bench section ([A-Za-z0-9_-]+) -->$`)
	benchHeaders = []string{"- command: `", "- date: ", "- machine: ", "- load average (1, 5, 15 min): "}
)

// ParseBenchPage reads a bench page and says where it leaves the layout benchpage.sh
// writes: the title and the line naming its script, then sections, each opened and closed
// by its markers, with its heading, the four header lines in order and a non-empty body,
// one blank line between sections, nothing outside them.
func ParseBenchPage(page string) (BenchPage, error) {
	var bp BenchPage
	m := benchTitle.FindStringSubmatch(page)
	if m == nil {
		return bp, fmt.Errorf("the page does not start with its title and the line naming the script that writes it")
	}
	bp.Title, bp.Script = m[1], m[2]
	if page[len(m[0]):] == "" { // no part has run yet
		return bp, nil
	}
	rest := strings.Split(strings.TrimSuffix(page[len(m[0]):], "\n"), "\n")
	for len(rest) > 0 {
		if rest[0] != "" {
			return bp, fmt.Errorf("%q outside a section (want a blank line, then a section's marker)", rest[0])
		}
		if len(rest) < 2 {
			return bp, fmt.Errorf("the page ends with a blank line")
		}
		s, n, err := parseBenchSection(rest[1:])
		if err != nil {
			return bp, err
		}
		bp.Sections = append(bp.Sections, s)
		rest = rest[1+n:]
	}
	return bp, nil
}

// parseBenchSection reads one section from its opening marker and returns it with the
// number of lines it took.
func parseBenchSection(l []string) (BenchSection, int, error) {
	var s BenchSection
	m := benchStart.FindStringSubmatch(l[0])
	if m == nil {
		return s, 0, fmt.Errorf("%q: want a section's opening marker", l[0])
	}
	s.ID = m[1]
	end := -1
	for i, x := range l {
		if x == "<!-- end bench section "+s.ID+" -->" {
			end = i
			break
		}
	}
	if end < 0 {
		return s, 0, fmt.Errorf("section %s has no closing marker", s.ID)
	}
	if end < 9 || !strings.HasPrefix(l[1], "## ") || l[2] != "" || l[7] != "" {
		return s, 0, fmt.Errorf("section %s: want its heading, a blank line, the four header lines, a blank line and a body", s.ID)
	}
	s.Heading = strings.TrimPrefix(l[1], "## ")
	vals := make([]string, len(benchHeaders))
	for i, h := range benchHeaders {
		if !strings.HasPrefix(l[3+i], h) || len(l[3+i]) == len(h) {
			return s, 0, fmt.Errorf("section %s: line %q: want %q and a value", s.ID, l[3+i], h)
		}
		vals[i] = strings.TrimPrefix(l[3+i], h)
	}
	if !strings.HasSuffix(vals[0], "`") {
		return s, 0, fmt.Errorf("section %s: the command is not one code span: %q", s.ID, l[3])
	}
	s.Command, s.Date, s.Machine, s.Load = strings.TrimSuffix(vals[0], "`"), vals[1], vals[2], vals[3]
	s.Body = strings.Join(l[8:end], "\n")
	if strings.TrimSpace(s.Body) == "" || l[8] == "" || l[end-1] == "" {
		return s, 0, fmt.Errorf("section %s: its body is empty or starts or ends with a blank line", s.ID)
	}
	return s, end + 1, nil
}
