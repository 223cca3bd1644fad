// Package dbserver holds what every database server wirelab runs has in common, whatever
// the engine: its process (started in its own session, recognised by its name in /proc,
// stopped with a graceful signal and then killed), its directory (reachable and owned by
// the unprivileged user the server runs as) and the admin client's tab-separated output.
package dbserver
