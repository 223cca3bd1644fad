// Package promtest is for tests of a Prometheus endpoint (a tunnel end's, a run's live
// metrics): a scrape of a handler in-process, read into its samples, and Prometheus's own
// linter (`promtool check metrics`) run on the text.
package promtest
