package flagx

import (
	"flag"
	"strings"
	"time"
)

// Given reports whether the user set the flag name on fs.
func Given(fs *flag.FlagSet, name string) bool {
	return FirstGiven(fs, func(n string) bool { return n == name }) != ""
}

// FirstGiven is the first flag, in name order, that the user set and match accepts; ""
// for none. Commands use it to refuse flags the rest of the command line makes moot.
func FirstGiven(fs *flag.FlagSet, match func(name string) bool) string {
	named := ""
	fs.Visit(func(f *flag.Flag) {
		if named == "" && match(f.Name) {
			named = f.Name
		}
	})
	return named
}

// List collects a flag given several times or as a comma-separated list, blanks dropped.
type List []string

func (l *List) String() string { return strings.Join(*l, ",") }

// Set adds v's comma-separated items.
func (l *List) Set(v string) error {
	*l = append(*l, Split(v)...)
	return nil
}

// Split splits a comma-separated value, dropping blanks around and between items.
func Split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Duration is d as time.ParseDuration reads it, without the zero units time.Duration's
// String adds: "6h", "1m30s", "1s", not "6h0m0s".
func Duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
