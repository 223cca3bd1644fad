package replay

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
)

// line is one line of the child's standard output: exactly one field is set. Shapes go
// on lines of their own so no line grows with the number of shapes.
type line struct {
	Tick    *Tick      `json:"tick,omitempty"`
	Shape   *ShapeStat `json:"shape,omitempty"`
	Summary *Summary   `json:"summary,omitempty"`
}

// lineWriter writes the child's lines, one at a time.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) write(v line) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode a replay line: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err = l.w.Write(append(b, '\n'))
	return err
}

func (l *lineWriter) tick(t Tick) error { return l.write(line{Tick: &t}) }

// summary writes the shapes, then the summary without them.
func (l *lineWriter) summary(s *Summary) error {
	for i := range s.Shapes {
		if err := l.write(line{Shape: &s.Shapes[i]}); err != nil {
			return err
		}
	}
	short := *s
	short.Shapes = nil
	return l.write(line{Summary: &short})
}

// sessionWriter streams SessionFigures as JSON lines to a file, as sessions end.
type sessionWriter struct {
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	err error
}

// newSessionWriter creates path ("" = a writer that drops everything).
func newSessionWriter(path string) (*sessionWriter, error) {
	if path == "" {
		return &sessionWriter{}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--sessions-file: %w", err)
	}
	return &sessionWriter{f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

func (s *sessionWriter) write(f *SessionFigures) {
	if s.f == nil {
		return
	}
	b, err := json.Marshal(f)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		_, err = s.w.Write(append(b, '\n'))
	}
	if err != nil && s.err == nil {
		s.err = fmt.Errorf("--sessions-file: %w", err)
	}
}

func (s *sessionWriter) close() error {
	if s.f == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.w.Flush(); err != nil && s.err == nil {
		s.err = fmt.Errorf("--sessions-file: %w", err)
	}
	if err := s.f.Close(); err != nil && s.err == nil {
		s.err = fmt.Errorf("--sessions-file: %w", err)
	}
	return s.err
}

// ownCost is this process's CPU time so far and its peak resident memory (getrusage).
func ownCost() Cost {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return Cost{}
	}
	return Cost{UserS: tvSeconds(ru.Utime), SysS: tvSeconds(ru.Stime), MaxRSSBytes: ru.Maxrss * 1024}
}

func tvSeconds(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }
