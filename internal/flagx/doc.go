// Package flagx is what the flags of every command and child process share: whether the
// user gave a flag (a default is not a choice), a list given repeated or comma-separated,
// and a duration written back onto a child's command line as a person would write it.
package flagx
