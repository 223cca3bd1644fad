package querylog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// lineReader hands out a log's lines one at a time without their newline. A line is a
// slice of the reader's buffer, valid until the next call; memory is one buffer of the
// longest line seen, capped at max bytes.
type lineReader struct {
	br   *bufio.Reader
	max  int
	long []byte // a line longer than the bufio buffer, assembled here

	cur    []byte
	curNo  int64
	curErr error
	unread bool
	lastNo int64 // number of the last line read from the input
}

func newLineReader(br *bufio.Reader, max int) *lineReader {
	return &lineReader{br: br, max: max}
}

// next returns the next line and its number (1-based), io.EOF at the end of the input.
// Two lines are bad, a *BadLineError, returned with what there is of them so the
// parser can tell which entry they belong to: a line longer than max (its first 200
// bytes; the rest is read and dropped, so reading goes on after it), and a last line
// without a newline (servers write whole lines: the log was cut mid-line).
func (l *lineReader) next() ([]byte, int64, error) {
	if l.unread {
		l.unread = false
		return l.cur, l.curNo, l.curErr
	}
	l.cur, l.curErr = l.read()
	l.curNo = l.lastNo
	return l.cur, l.curNo, l.curErr
}

// back makes the next call to next return what it returned last.
func (l *lineReader) back() { l.unread = true }

func (l *lineReader) read() ([]byte, error) {
	line, err := l.br.ReadSlice('\n')
	switch {
	case err == nil:
		l.lastNo++
		return trimEOL(line), nil
	case err == io.EOF && len(line) > 0:
		l.lastNo++
		return line, l.cutShort(line)
	case err == io.EOF:
		return nil, io.EOF
	case !errors.Is(err, bufio.ErrBufferFull):
		return nil, fmt.Errorf("read line %d: %w", l.lastNo+1, err)
	}
	l.lastNo++
	l.long = append(l.long[:0], line...)
	for {
		line, err = l.br.ReadSlice('\n')
		if len(l.long)+len(line) > l.max {
			return l.skipLong(err)
		}
		l.long = append(l.long, line...)
		switch {
		case err == nil:
			return trimEOL(l.long), nil
		case err == io.EOF:
			return l.long, l.cutShort(l.long)
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, fmt.Errorf("read line %d: %w", l.lastNo, err)
		}
	}
}

func (l *lineReader) cutShort(line []byte) error {
	return badLine(l.lastNo, line, "the log ends mid-line (no newline after its last line): the copy was cut short")
}

// skipLong drops the rest of a line over the limit and reports it with its head.
func (l *lineReader) skipLong(err error) ([]byte, error) {
	head := l.long[:min(len(l.long), 200)]
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = l.br.ReadSlice('\n')
	}
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("read line %d: %w", l.lastNo, err)
	}
	return head, badLine(l.lastNo, head,
		fmt.Sprintf("line longer than %d bytes (raise the entry limit if the log really has such statements)", l.max))
}

// more reads the next line of the entry being read. ok is false at the entry's end: the
// end of the log, or a line that starts another entry (starts says which do), which is
// left for the next entry. A bad line that does not start another entry is the entry's
// error.
func (l *lineReader) more(starts func([]byte) bool) (line []byte, no int64, ok bool, err error) {
	line, no, err = l.next()
	switch {
	case err == io.EOF:
		return nil, 0, false, nil
	case err != nil && !isBad(err):
		return nil, 0, false, err
	case starts(line):
		l.back()
		return nil, 0, false, nil
	}
	return line, no, err == nil, err
}

// skipEntry drops the rest of a bad entry, so that it counts as one bad entry.
func (l *lineReader) skipEntry(starts func([]byte) bool) {
	for {
		_, _, ok, err := l.more(starts)
		if !ok && (err == nil || !isBad(err)) {
			return
		}
	}
}

// entryError drops the rest of the entry a bad line is in, then returns the error.
func (l *lineReader) entryError(err error, starts func([]byte) bool) error {
	if isBad(err) {
		l.skipEntry(starts)
	}
	return err
}

// isBad reports a *BadLineError; the readers return them as they are, never wrapped.
func isBad(err error) bool {
	_, ok := err.(*BadLineError)
	return ok
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}

// badLine builds the error for a line the reader cannot read as its format.
func badLine(no int64, text []byte, why string) *BadLineError {
	if len(text) > 200 {
		text = text[:200]
	}
	return &BadLineError{Line: no, Text: string(text), Why: why}
}
