package cli

import (
	"flag"
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

// studyArgs parses a study's command line: its flags, no stray argument, then --quick's
// values (when quick is set) for every flag the user did not give.
func studyArgs(fs *flag.FlagSet, args []string, name string, quick *bool, quickValues map[string]string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("study %s: unexpected argument %q", name, fs.Arg(0))
	}
	return applyQuick(fs, *quick, quickValues)
}

// studyPreamble is what a study with options of its own (sync, replication) does before
// anything touches the kernel: studyArgs, then options and the measuring flags (every
// error a usage error naming the study and the flag), the output directory (--out, else
// results/NAME-<time>) created and proved writable, and root.
func studyPreamble[O any](p *Process, fs *flag.FlagSet, args []string, name string, quick *bool,
	quickValues map[string]string, out *string, m *measureFlags, options func() (O, error)) (O, measureOptions, error) {
	var o O
	var mo measureOptions
	if err := studyArgs(fs, args, name, quick, quickValues); err != nil {
		return o, mo, err
	}
	o, err := options()
	if err == nil {
		mo, err = m.options("")
	}
	if err != nil {
		return o, mo, &UsageError{fmt.Errorf("study %s: %w", name, err)}
	}
	if mo.Out, err = outDir(*out, name); err != nil {
		return o, mo, &UsageError{err}
	}
	if err := requireRoot(p); err != nil {
		return o, mo, err
	}
	return o, mo, nil
}
