package querylog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// DefaultMaxEntry is the longest line or multi-line entry a reader takes unless told
// otherwise: above MariaDB's default max_allowed_packet (16 MiB) and MySQL 8's (64 MiB
// is the cap here), so a real statement fits and a file without newlines is refused
// before it fills the memory.
const DefaultMaxEntry = 64 << 20

// headSize is how much of a log Open reads ahead to sniff its format.
const headSize = 64 << 10

var (
	// ErrUnknownFormat is a log whose first lines are none of the formats, or a format
	// name that is none of them.
	ErrUnknownFormat = errors.New("unknown query log format")
	// ErrBinary is a file that is not text (a NUL byte near its start).
	ErrBinary = errors.New("binary file, not a query log")
)

// Options are how Open reads a log.
type Options struct {
	// Format names the log's format; empty detects it from the first lines.
	Format Format
	// SkipBadLines skips an entry the reader cannot read, and counts it (Log.Skipped),
	// instead of stopping at it with a *BadLineError.
	SkipBadLines bool
	// MaxEntry is the longest line or multi-line entry taken, in bytes (0:
	// DefaultMaxEntry); a longer one is a bad line.
	MaxEntry int
}

// Log is an open query log: a Reader of its events.
type Log struct {
	*stream
	format Format
}

// Format is the log's format, named or detected.
func (l *Log) Format() Format { return l.format }

// Skipped is how many bad entries the reader has skipped so far (Options.SkipBadLines).
func (l *Log) Skipped() int64 { return l.skipped }

// Open reads a query log from r. It sniffs the first 64 KiB: a binary file is refused
// (ErrBinary), and with no Format named the format is detected (ErrUnknownFormat when it
// is none of Formats). The Log then streams: it holds one line, one entry, and a few
// words per open session, whatever the log's length.
func Open(r io.Reader, opt Options) (*Log, error) {
	if opt.MaxEntry < 0 {
		return nil, fmt.Errorf("open query log: entry limit %d bytes: want a positive size", opt.MaxEntry)
	}
	if opt.MaxEntry == 0 {
		opt.MaxEntry = DefaultMaxEntry
	}
	br := bufio.NewReaderSize(r, headSize)
	head, err := br.Peek(headSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, fmt.Errorf("open query log: %w", err)
	}
	if err := checkText(head); err != nil {
		return nil, err
	}
	f := opt.Format
	if f == "" {
		if f, err = Detect(head); err != nil {
			return nil, err
		}
	} else if _, err := ParseFormat(string(f)); err != nil {
		return nil, err
	}
	lines := newLineReader(br, opt.MaxEntry)
	return &Log{stream: newStream(lines, newParser(f, opt.MaxEntry), opt.SkipBadLines), format: f}, nil
}

func newParser(f Format, max int) parser {
	switch f {
	case MySQLGeneral:
		return &generalParser{max: max}
	case MySQLSlow:
		return &slowParser{max: max}
	case PGStderr:
		return &pgStderrParser{pg: pgState{max: max}}
	default:
		return &pgCSVParser{pg: pgState{max: max}}
	}
}

// ParseFormat reads a format's name as the --format flag gives it.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("%w %q: want one of %s", ErrUnknownFormat, s, formatList())
}

func formatList() string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}
