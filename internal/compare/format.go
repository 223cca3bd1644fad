package compare

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/wirelab/wirelab/internal/report"
)

// Format is how a comparison is written.
type Format string

// The formats: an aligned table for the terminal, markdown, one HTML page, JSON.
const (
	Text     Format = "text"
	Markdown Format = "md"
	HTML     Format = "html"
	JSON     Format = "json"
)

// Formats are the accepted --format values, in the order help texts list them.
var Formats = []Format{Text, Markdown, HTML, JSON}

// ErrBadFormat means a format name is not one of Formats.
var ErrBadFormat = errors.New("unknown format")

// ParseFormat reads a --format value.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("%w %q: want one of %s", ErrBadFormat, s, strings.Join(names, ", "))
}

// Write writes c in format f.
func Write(w io.Writer, c *Comparison, f Format) error {
	var err error
	switch f {
	case Text:
		err = writeText(w, c)
	case Markdown:
		_, err = io.WriteString(w, report.Markdown(c.blocks()))
	case HTML:
		_, err = io.WriteString(w, report.HTML("wirelab compare", c.blocks(), nil))
	case JSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		err = enc.Encode(c)
	default:
		return fmt.Errorf("write comparison: %w %q", ErrBadFormat, f)
	}
	if err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	return nil
}

// writeText is the terminal's form: the runs, an aligned table per metric, the legend.
func writeText(w io.Writer, c *Comparison) error {
	var b strings.Builder
	for _, l := range c.runLines() {
		b.WriteString(l + "\n")
	}
	for _, t := range c.Tables {
		b.WriteString("\n" + t.Title + "\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, row := range append([][]string{c.header()}, c.cells(t)...) {
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	b.WriteString("\n" + c.legend() + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// blocks are the comparison as report blocks, for markdown and HTML.
func (c *Comparison) blocks() []report.Block {
	numeric := make([]bool, len(c.header()))
	for i := 1; i < len(numeric); i++ {
		numeric[i] = true
	}
	bs := []report.Block{
		report.Heading{Level: 1, Text: "wirelab compare"},
		report.List{Items: c.runLines()},
	}
	for _, t := range c.Tables {
		bs = append(bs, report.Table{Caption: t.Title, Header: c.header(), Rows: c.cells(t), Numeric: numeric})
	}
	return append(bs, report.Paragraph{Text: c.legend()})
}
