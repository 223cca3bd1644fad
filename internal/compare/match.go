package compare

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrMismatch means the runs' points do not pair up: a point ran under conditions the
// other run has no point for, or a condition has several series on a side and they do
// not pair by name.
var ErrMismatch = errors.New("points do not match")

// maxProblems is how many unmatched points a refusal lists before it counts the rest.
const maxProblems = 8

// pair matches other's groups to base's, returning other's group for each of base's.
// Groups pair by key; within a key, by series when both sides have it, else, when each
// side has exactly one series there, those two: the variant under test (20mbit against
// 20mbit+compression). Every group of either side must find its match.
func pair(baseName string, base []*group, otherName string, other []*group) ([]*group, error) {
	baseBy, otherBy := byKey(base), byKey(other)
	matched := make([]*group, len(base))
	index := map[*group]int{}
	for i, g := range base {
		index[g] = i
	}
	var problems []string
	for _, g := range base {
		o := otherBy[g.key]
		if len(o) == 0 {
			problems = append(problems, unmatched(baseName, g, otherName, other))
			continue
		}
		b := baseBy[g.key]
		if len(b) == 1 && len(o) == 1 {
			matched[index[g]] = o[0]
			continue
		}
		if og := bySeries(o, g.series); og != nil {
			matched[index[g]] = og
			continue
		}
		problems = append(problems, fmt.Sprintf("%s has series %s at %s, %s has %s: several series pair only by name",
			baseName, seriesList(b), g.key, otherName, seriesList(o)))
	}
	for _, g := range other {
		if len(baseBy[g.key]) == 0 {
			problems = append(problems, unmatched(otherName, g, baseName, base))
		}
	}
	if len(problems) > 0 {
		return nil, refusal(ErrMismatch, []string{baseName, otherName}, problems)
	}
	return matched, nil
}

// refusal is kind over the runs, listing its problems (the first maxProblems of them,
// then how many more), one a line.
func refusal(kind error, runs []string, problems []string) error {
	problems = dedupe(problems)
	more := ""
	if len(problems) > maxProblems {
		more = fmt.Sprintf("\n  ... and %d more", len(problems)-maxProblems)
		problems = problems[:maxProblems]
	}
	names := strings.Join(runs, " and ")
	if n := len(runs); n > 2 {
		names = strings.Join(runs[:n-1], ", ") + " and " + runs[n-1]
	}
	return fmt.Errorf("%w: %s:\n  %s%s", kind, names, strings.Join(problems, "\n  "), more)
}

// unmatched says that g of run `name` has no match in run `in`, naming the fields in
// which the nearest point of `in` differs.
func unmatched(name string, g *group, in string, candidates []*group) string {
	var best []string
	for _, c := range candidates {
		if d := differences(g.key, c.key); best == nil || len(d) < len(best) {
			best = d
		}
	}
	s := fmt.Sprintf("%s: point %s has no match in %s", name, describe(g.series, g.key), in)
	if len(best) > 0 {
		s += "; the nearest differs in " + strings.Join(best, ", ")
	}
	return s
}

func byKey(gs []*group) map[Key][]*group {
	m := map[Key][]*group{}
	for _, g := range gs {
		m[g.key] = append(m[g.key], g)
	}
	return m
}

func bySeries(gs []*group, series string) *group {
	for _, g := range gs {
		if g.series == series {
			return g
		}
	}
	return nil
}

func seriesList(gs []*group) string {
	var s []string
	for _, g := range gs {
		s = append(s, g.series)
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
