package report

// Block is one piece of a report that both renderers know how to draw. The set is closed:
// Heading, Paragraph, List, Table, Callout, Details and *Chart.
type Block interface{ block() }

// Heading is a section title; Level 2 is a study, 3 an experiment inside it.
type Heading struct {
	Level int
	Text  string
}

// Paragraph is plain prose (no markup: renderers escape it).
type Paragraph struct{ Text string }

// List is a bullet list of plain-text items, used for findings.
type List struct{ Items []string }

// Callout is something the reader must not miss: failed points, a wire that did not
// match what was asked, an interrupted run.
type Callout struct {
	Kind string // "warning" or "note"
	Text string
}

// Details is verbatim text kept for whoever needs it but out of the reader's way (the
// kernel's read-back of the link): collapsed under Summary in HTML, a fenced block under
// a bold Summary line in markdown.
type Details struct {
	Summary string
	Text    string
}

// Table is a caption, a header and rows of already formatted cells. Numeric marks the
// columns to right-align.
type Table struct {
	Caption string
	Header  []string
	Rows    [][]string
	Numeric []bool
}

func (Heading) block()   {}
func (Paragraph) block() {}
func (List) block()      {}
func (Callout) block()   {}
func (Table) block()     {}
func (Details) block()   {}
func (*Chart) block()    {}

// numericCols marks every column but the first as numeric, the common table shape
// (a label, then numbers).
func numericCols(n int) []bool {
	b := make([]bool, n)
	for i := 1; i < n; i++ {
		b[i] = true
	}
	return b
}
