package engine

import "strings"

// trimLine is a one-value query's output without its trailing newline.
func trimLine(s string) string { return strings.TrimSpace(strings.SplitN(s, "\n", 2)[0]) }
