package dbserver

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// ParseTable splits an admin client's tab-separated output whose first line holds the
// column names (`mariadb --batch`, `psql -A -F '\t'`) into column -> value rows.
func ParseTable(out string) []map[string]string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) < 2 {
		return nil
	}
	cols := strings.Split(lines[0], "\t")
	rows := make([]map[string]string, 0, len(lines)-1)
	for _, ln := range lines[1:] {
		vals := strings.Split(ln, "\t")
		row := make(map[string]string, len(cols))
		for i, c := range cols {
			if i < len(vals) {
				row[c] = vals[i]
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// RandomPassword is 128 random bits in hex: safe in SQL literals, URLs and argv.
func RandomPassword() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// Abbrev shortens SQL for error messages: whitespace collapsed, at most 80 bytes.
func Abbrev(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
