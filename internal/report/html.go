package report

import (
	"encoding/base64"
	"html"
	"strings"
)

const css = `body{font:15px/1.5 -apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:#222;max-width:1100px;margin:2em auto;padding:0 1em}
h1{font-size:1.7em;border-bottom:2px solid #ddd;padding-bottom:.2em}h2{font-size:1.35em;margin-top:2em;border-bottom:1px solid #eee}h3{font-size:1.1em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:13px;font-variant-numeric:tabular-nums}
caption{text-align:left;font-weight:600;padding:.2em 0}th,td{border:1px solid #ddd;padding:.25em .6em;vertical-align:top}
.t{overflow-x:auto}
th{background:#f4f5f7}tr:nth-child(even) td{background:#fafbfc}td.n{text-align:right;white-space:nowrap}
figure{margin:1em 0 1.6em}figure img{max-width:100%;height:auto;border:1px solid #eee}figcaption{font-size:13px;color:#555}
.warning{background:#fff4e5;border-left:4px solid #f0a020;padding:.5em .8em;margin:.8em 0}.note{background:#eef5ff;border-left:4px solid #4a8ad8;padding:.5em .8em;margin:.8em 0}
li{margin:.25em 0}
details{margin:.4em 0 1.2em;font-size:13px}summary{cursor:pointer;color:#555}pre{background:#f6f8fa;border:1px solid #eee;padding:.6em;overflow-x:auto;font-size:12px}`

// HTML draws blocks as one self-contained page; png returns a chart's PNG by name, which
// is inlined as a data: URI so the file needs nothing next to it.
func HTML(title string, blocks []Block, png func(name string) []byte) string {
	var b strings.Builder
	e := html.EscapeString
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + e(title) +
		"</title>\n<style>\n" + css + "\n</style>\n</head>\n<body>\n")
	for _, bl := range blocks {
		switch v := bl.(type) {
		case Heading:
			h := "h" + string(rune('0'+min(max(v.Level, 1), 6)))
			b.WriteString("<" + h + ">" + e(v.Text) + "</" + h + ">\n")
		case Paragraph:
			b.WriteString("<p>" + e(v.Text) + "</p>\n")
		case List:
			b.WriteString("<ul>\n")
			for _, it := range v.Items {
				b.WriteString("<li>" + e(it) + "</li>\n")
			}
			b.WriteString("</ul>\n")
		case Callout:
			label := "Note"
			if v.Kind == "warning" {
				label = "Warning"
			}
			b.WriteString("<div class=\"" + e(v.Kind) + "\"><strong>" + label + ":</strong> " + e(v.Text) + "</div>\n")
		case Table:
			htmlTable(&b, v)
		case Details:
			b.WriteString("<details><summary>" + e(v.Summary) + "</summary>\n<pre>" + e(v.Text) + "</pre>\n</details>\n")
		case *Chart:
			b.WriteString("<figure>\n<img src=\"data:image/png;base64," + base64.StdEncoding.EncodeToString(png(v.Name)) +
				"\" alt=\"" + e(v.Title) + "\" width=\"864\">\n<figcaption>" + e(v.Caption) + " (" + e(v.Name) + ".png, " + e(v.Name) + ".svg)</figcaption>\n</figure>\n")
		}
	}
	b.WriteString("</body>\n</html>\n")
	return b.String()
}

func htmlTable(b *strings.Builder, t Table) {
	e := html.EscapeString
	b.WriteString("<div class=\"t\"><table>\n")
	if t.Caption != "" {
		b.WriteString("<caption>" + e(t.Caption) + "</caption>\n")
	}
	b.WriteString("<thead><tr>")
	for _, h := range t.Header {
		b.WriteString("<th>" + e(h) + "</th>")
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for _, r := range t.Rows {
		b.WriteString("<tr>")
		for i, c := range r {
			if i < len(t.Numeric) && t.Numeric[i] {
				b.WriteString("<td class=\"n\">" + e(c) + "</td>")
			} else {
				b.WriteString("<td>" + e(c) + "</td>")
			}
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table></div>\n")
}
