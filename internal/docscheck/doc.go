// Package docscheck keeps the repository's documents honest. Its tests read the markdown
// files as a newcomer would follow them: every link and every repository path a page names
// exists, every page under docs/ is reachable from the README, every usage line names only
// flags its command has (asked of the command line itself, in memory), every package has its
// paragraph in docs/architecture.md, and the bench pages keep the layout scripts/benchpage.sh
// writes. The package's code is the markdown reading those tests share; production code
// never imports it.
package docscheck
