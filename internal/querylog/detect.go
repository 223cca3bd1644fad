package querylog

import (
	"bytes"
	"fmt"
)

// detectLines is how many lines Detect reads before it gives up.
const detectLines = 64

// Detect names the format of a log from its first bytes: the first line that is not the
// server's header decides, read by the same rules the readers use. A log that is empty,
// holds only the header (a general and a slow log start alike), or starts with a line of
// no format is an ErrUnknownFormat naming the formats, so the user can name one.
func Detect(head []byte) (Format, error) {
	if err := checkText(head); err != nil {
		return "", err
	}
	sawHeader := false
	rest := head
	for no := 1; no <= detectLines && len(rest) > 0; no++ {
		var line []byte
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = trimEOL(rest[:i+1]), rest[i+1:]
		} else {
			line, rest = rest, nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if isServerHeader(line) {
			sawHeader = true
			continue
		}
		if f, ok := lineFormat(line); ok {
			return f, nil
		}
		if _, _, ok := pgTime(line); ok {
			return "", fmt.Errorf("%w: line %d (%q) is a PostgreSQL log line, but not in pgreplay's format: "+
				"set log_line_prefix = '%%m|%%u|%%d|%%c|' (or log_destination = 'csvlog')", ErrUnknownFormat, no, cut(line, 80))
		}
		return "", fmt.Errorf("%w: line %d (%q) starts none of %s: name the format with --format",
			ErrUnknownFormat, no, cut(line, 80), formatList())
	}
	if sawHeader {
		return "", fmt.Errorf("%w: the log holds only the server's header, which general and slow logs share: name the format with --format (%s)",
			ErrUnknownFormat, formatList())
	}
	return "", fmt.Errorf("%w: the log is empty: name the format with --format (%s)", ErrUnknownFormat, formatList())
}

// lineFormat names the format a line is the first entry of.
func lineFormat(line []byte) (Format, bool) {
	switch {
	case bytes.HasPrefix(line, []byte("# Time: ")), bytes.HasPrefix(line, []byte("# User@Host: ")):
		return MySQLSlow, true
	case isGeneral(line):
		return MySQLGeneral, true
	}
	if _, rest, ok := pgTime(line); ok && len(rest) > 0 {
		switch rest[0] {
		case '|':
			if _, ok := parsePGPrefix(line); ok {
				return PGStderr, true
			}
		case ',':
			return PGCSV, true
		}
	}
	return "", false
}

func isGeneral(line []byte) bool {
	_, ok := parseGeneral(line)
	return ok
}

// checkText refuses what is not a text log, with the line the binary data is on.
func checkText(head []byte) error {
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		return fmt.Errorf("%w: gzip-compressed (decompress it first, or pipe it through zcat)", ErrBinary)
	}
	probe := head[:min(len(head), 8000)]
	if i := bytes.IndexByte(probe, 0); i >= 0 {
		line := bytes.Count(probe[:i], []byte{'\n'}) + 1
		return fmt.Errorf("%w: NUL byte at line %d, byte %d", ErrBinary, line, i+1)
	}
	return nil
}

func cut(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
