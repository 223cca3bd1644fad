// Package cli is wirelab's command line: one file per subcommand, each a function from the
// process state and its arguments to an error. Main maps errors to exit codes and hints.
package cli
