package study

import (
	"time"

	"github.com/wirelab/wirelab/internal/result"
)

// Cells walks a fixed list of points in order: the Next, Total and Remaining of a study
// whose points are known before the first is measured (the closed-loop matrix, sync).
// A study embeds it and adds its points in Needs' order with Add.
type Cells[C Cell] struct {
	cells []C
	next  int
}

// Add appends points to the walk.
func (s *Cells[C]) Add(c ...C) { s.cells = append(s.cells, c...) }

// Next returns the points in order.
func (s *Cells[C]) Next([]result.Point) (Cell, bool) {
	if s.next >= len(s.cells) {
		return nil, false
	}
	s.next++
	return s.cells[s.next-1], true
}

// Total is the number of points.
func (s *Cells[C]) Total() int { return len(s.cells) }

// Remaining is the expected time of the points not yet measured (Remainder).
func (s *Cells[C]) Remaining() time.Duration { return expected(s.cells[s.next:]) }

// Estimate is the expected time of every point, for the CLI's "about N minutes".
func (s *Cells[C]) Estimate() time.Duration { return expected(s.cells).Round(time.Second) }

// expected is how long cs are expected to take together.
func expected[C Cell](cs []C) time.Duration {
	var d time.Duration
	for _, c := range cs {
		d += c.Expected()
	}
	return d
}
