// Package report turns a results.json (result.Run) into report.md, a self-contained
// report.html and the charts as PNG and SVG. Each study draws its own section (run.go,
// bandwidth.go, transport.go, replication.go) as a list of Blocks; the markdown and HTML
// renderers draw the same Blocks, so the two reports never say different things.
package report
