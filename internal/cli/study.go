package cli

import (
	"sort"
	"strings"
)

// studies is the explicit registry of `wirelab study NAME`.
func studies() map[string]func(p *Process, args []string) error {
	return map[string]func(p *Process, args []string) error{
		"bandwidth":   studyBandwidth,
		"transport":   studyTransport,
		"replication": studyReplication,
	}
}

func cmdStudy(p *Process, args []string) error {
	reg := studies()
	names := make([]string, 0, len(reg))
	for n := range reg {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		return usagef("study: want a study name: %s (e.g. wirelab study bandwidth --quick)", strings.Join(names, ", "))
	}
	f, ok := reg[args[0]]
	if !ok {
		return usagef("study: unknown study %q: want one of %s", args[0], strings.Join(names, ", "))
	}
	return f(p, args[1:])
}
