package cli

import (
	"fmt"
	"sort"
	"strings"
)

// studies is the explicit registry of `wirelab study NAME`.
func studies() map[string]func(p *Process, args []string) error {
	return map[string]func(p *Process, args []string) error{
		"bandwidth":   studyBandwidth,
		"transport":   studyTransport,
		"replication": studyReplication,
		"sync":        studySync,
	}
}

func cmdStudy(p *Process, args []string) error {
	reg := studies()
	names := make([]string, 0, len(reg))
	for n := range reg {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprintf(p.Stdout, "Usage: wirelab study NAME [flags]\n\nStudies: %s\n\nExample:\n  wirelab study bandwidth --quick\n\nRun 'wirelab study NAME --help' for its flags.\n", strings.Join(names, ", "))
		return nil
	}
	if len(args) == 0 {
		return usagef("study: want a study name: %s (e.g. wirelab study bandwidth --quick)", strings.Join(names, ", "))
	}
	f, ok := reg[args[0]]
	if !ok {
		return usagef("study: unknown study %q: want one of %s", args[0], strings.Join(names, ", "))
	}
	return f(p, args[1:])
}
