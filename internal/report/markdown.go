package report

import (
	"strings"
)

// Markdown draws blocks as GitHub-flavoured markdown; charts link NAME.png next to it.
func Markdown(blocks []Block) string {
	var b strings.Builder
	for _, bl := range blocks {
		switch v := bl.(type) {
		case Heading:
			b.WriteString(strings.Repeat("#", max(1, v.Level)) + " " + mdEscape(v.Text) + "\n\n")
		case Paragraph:
			b.WriteString(mdEscape(v.Text) + "\n\n")
		case List:
			for _, it := range v.Items {
				b.WriteString("- " + mdEscape(it) + "\n")
			}
			b.WriteString("\n")
		case Callout:
			label := "Note"
			if v.Kind == "warning" {
				label = "Warning"
			}
			b.WriteString("> **" + label + ":** " + mdEscape(v.Text) + "\n\n")
		case Table:
			mdTable(&b, v)
		case Details:
			// The fence is longer than any run of backticks in the text, so it cannot close early.
			fence := "```"
			for strings.Contains(v.Text, fence) {
				fence += "`"
			}
			b.WriteString("**" + mdEscape(v.Summary) + "**\n\n" + fence + "text\n" + strings.TrimRight(v.Text, "\n") + "\n" + fence + "\n\n")
		case *Chart:
			b.WriteString("![" + mdEscape(v.Title) + "](" + v.Name + ".png)\n\n")
			if v.Caption != "" {
				b.WriteString("*" + mdEscape(v.Caption) + "* ")
			}
			b.WriteString("([SVG](" + v.Name + ".svg))\n\n")
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func mdTable(b *strings.Builder, t Table) {
	if t.Caption != "" {
		b.WriteString("**" + mdEscape(t.Caption) + "**\n\n")
	}
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + mdCell(c) + " |")
		}
		b.WriteString("\n")
	}
	row(t.Header)
	b.WriteString("|")
	for i := range t.Header {
		if i < len(t.Numeric) && t.Numeric[i] {
			b.WriteString(" ---: |")
		} else {
			b.WriteString(" --- |")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		row(r)
	}
	b.WriteString("\n")
}

// mdEscape keeps prose literal: the characters markdown would read as emphasis or links.
// Underscores stay: GitHub does not read intraword ones (oltp_read_only) as emphasis.
var mdEscaper = strings.NewReplacer(`\`, `\\`, `*`, `\*`, "`", "\\`", `[`, `\[`, `]`, `\]`, `<`, `&lt;`)

func mdEscape(s string) string { return mdEscaper.Replace(s) }

func mdCell(s string) string {
	if s == "" {
		return " "
	}
	// A table row is one line: multi-line values (tc's read-back) keep their breaks as <br>.
	return strings.ReplaceAll(strings.ReplaceAll(mdEscape(s), "|", `\|`), "\n", "<br>")
}
