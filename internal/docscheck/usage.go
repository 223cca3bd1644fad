package docscheck

import (
	"regexp"
	"strings"
)

// Invocation is one `wirelab ...` command as a doc writes it: the words after `wirelab` up
// to the first flag, the flags it names (without their dashes), and the text it came from.
type Invocation struct {
	Words []string
	Flags []string
	Text  string
}

var (
	envAssign = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=\S*$`)
	flagName  = regexp.MustCompile(`^\[?--([a-z][a-z0-9-]*)`)
	bareWord  = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
	listSep   = regexp.MustCompile(`\s(?:&&|\|\||;|\|)\s`)
)

// Invocations returns the wirelab commands of one shell line: each command of a `&&`, `;`
// or `|` list that starts with wirelab (or bin/wirelab, after a `$ ` prompt or environment
// assignments). Flags are read up to a standalone `--` (what follows belongs to the command
// wirelab runs) and before a `#` comment.
func Invocations(line string) []Invocation {
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i]
	}
	line = strings.TrimPrefix(strings.TrimSpace(line), "$ ")
	var out []Invocation
	for _, part := range listSep.Split(line, -1) {
		f := strings.Fields(part)
		for len(f) > 0 && envAssign.MatchString(f[0]) {
			f = f[1:]
		}
		if len(f) == 0 || (f[0] != "wirelab" && f[0] != "bin/wirelab") {
			continue
		}
		inv := Invocation{Text: strings.TrimSpace(part)}
		words := true
		for _, w := range f[1:] {
			if w == "--" {
				break
			}
			if m := flagName.FindStringSubmatch(w); m != nil {
				inv.Flags = append(inv.Flags, m[1])
				words = false
				continue
			}
			if words && bareWord.MatchString(w) && len(inv.Words) < 2 {
				inv.Words = append(inv.Words, w)
			} else {
				words = false
			}
		}
		out = append(out, inv)
	}
	return out
}

// helpFlag is a flag as a command's --help lists it: "  --name type".
var helpFlag = regexp.MustCompile(`(?m)^  --([a-z][a-z0-9-]*)`)

// HelpFlags returns the flags a command's --help output lists, and whether it has a Flags
// section at all (a command group, `wirelab study`, has none: its subcommands do).
func HelpFlags(help string) (flags map[string]bool, listed bool) {
	flags = map[string]bool{}
	for _, m := range helpFlag.FindAllStringSubmatch(help, -1) {
		flags[m[1]] = true
	}
	return flags, strings.Contains(help, "\nFlags:\n")
}
