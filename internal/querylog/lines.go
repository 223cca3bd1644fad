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

	cur     []byte
	curNo   int64
	curErr  error
	unread  bool
	lastNo  int64 // number of the last line read from the input
	partial bool  // the last line read had no newline
}

func newLineReader(br *bufio.Reader, max int) *lineReader {
	return &lineReader{br: br, max: max}
}

// next returns the next line and its number (1-based). At the end of the input it
// returns io.EOF. A line longer than max is a *BadLineError (the rest of it is read and
// dropped, so the reader can go on after it), and so is a last line without a newline:
// servers write whole lines, so the log was cut mid-line.
func (l *lineReader) next() ([]byte, int64, error) {
	if l.unread {
		l.unread = false
		return l.cur, l.curNo, l.curErr
	}
	l.cur, l.curErr = l.read()
	l.curNo = l.lastNo
	if l.curErr == nil && l.partial {
		l.curErr = badLine(l.curNo, l.cur, "the log ends mid-line (no newline after its last line): the copy was cut short")
		l.cur = nil
	}
	return l.cur, l.curNo, l.curErr
}

// back makes the next call to next return the line it returned last.
func (l *lineReader) back() { l.unread = true }

func (l *lineReader) read() ([]byte, error) {
	line, err := l.br.ReadSlice('\n')
	if err == nil || (err == io.EOF && len(line) > 0) {
		l.lastNo++
		l.partial = err == io.EOF
		return trimEOL(line), nil
	}
	if err == io.EOF {
		return nil, io.EOF
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, fmt.Errorf("read line %d: %w", l.lastNo+1, err)
	}
	l.lastNo++
	l.long = append(l.long[:0], line...)
	for {
		line, err = l.br.ReadSlice('\n')
		if len(l.long)+len(line) > l.max {
			return nil, l.skipLong(err)
		}
		l.long = append(l.long, line...)
		switch {
		case err == nil:
			return trimEOL(l.long), nil
		case err == io.EOF:
			l.partial = true
			return trimEOL(l.long), nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, fmt.Errorf("read line %d: %w", l.lastNo, err)
		}
	}
}

// skipLong drops the rest of a line over the limit and reports it.
func (l *lineReader) skipLong(err error) error {
	head := append([]byte(nil), l.long[:min(len(l.long), 200)]...)
	l.long = l.long[:0]
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = l.br.ReadSlice('\n')
	}
	if err != nil && err != io.EOF {
		return fmt.Errorf("read line %d: %w", l.lastNo, err)
	}
	return &BadLineError{Line: l.lastNo, Text: string(head),
		Why: fmt.Sprintf("line longer than %d bytes (raise the entry limit if the log really has such statements)", l.max)}
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
