package flagx

import (
	"flag"
	"fmt"
	"strconv"
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

// UsageError is a bad invocation: a flag's value, or flags that do not go together. A
// command exits 2 on it and shows its usage hint; the package that checks a flag returns
// it so the command need not guess which of its errors are the user's.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef is a UsageError with a formatted message.
func Usagef(format string, a ...any) error { return &UsageError{fmt.Errorf(format, a...)} }

// MaxThreads is the most client threads (sysbench's threads, pgbench's clients) a
// --threads list may name.
const MaxThreads = 4096

// ParseThreads parses a --threads list, "1,8,32": each 1..MaxThreads, no duplicates, at
// least one.
func ParseThreads(v string) ([]int, error) {
	form := fmt.Sprintf("comma-separated whole numbers 1..%d, e.g. 1,8,32", MaxThreads)
	if strings.TrimSpace(v) == "" {
		return nil, fmt.Errorf("--threads is empty: want %s", form)
	}
	seen := map[int]bool{}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > MaxThreads {
			return nil, fmt.Errorf("--threads %q: %q is not allowed; want %s", v, f, form)
		}
		if seen[n] {
			return nil, fmt.Errorf("--threads %q: %d appears twice; want %s", v, n, form)
		}
		seen[n] = true
		out = append(out, n)
	}
	return out, nil
}

// JoinInts is xs as a comma-separated list flag spells it, "1,8,32".
func JoinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
