package study

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/wirelab/wirelab/internal/lab"
)

// keptLog is a log a run keeps beside its results: name.log in the backend's directory on
// host (Backend.Dir), copied to file in the results directory.
type keptLog struct {
	host, name, file string
}

// tunnelLogs are the logs of the tunnel's ends, wherever a study started them: the exit's
// on the server host and an entry's on each other host of the run (a client, the
// replica). The ends log every level decision and their bytes every 10 s, which a figure
// through the tunnel is read against; Down removes the backend's directories with them.
// The first entry's file is tunnel-entry.log, any other's names its host.
func tunnelLogs(hosts []string) []keptLog {
	logs := []keptLog{{lab.Server, "tunnel-exit", "tunnel-exit.log"}}
	for _, h := range hosts {
		if h == lab.Server {
			continue
		}
		file := "tunnel-entry.log"
		if len(logs) > 1 {
			file = "tunnel-entry-" + h + ".log"
		}
		logs = append(logs, keptLog{h, "tunnel-entry", file})
	}
	return logs
}

// keepLogs copies each log that exists into dir (a host without it ran no such process,
// a host the backend has no directory on, such as an existing server's, none at all:
// nothing is written for them). Hosts that share the backend's directory (the lab's) give
// each file once. It tries every log and returns what failed.
func keepLogs(ctx context.Context, b Backend, logs []keptLog, dir string) error {
	var errs []error
	seen := map[string]bool{}
	for _, l := range logs {
		d := b.Dir(l.host)
		if d == "" {
			continue
		}
		src := path.Join(d, l.name+".log")
		if seen[src] {
			continue
		}
		seen[src] = true
		// One command for "absent" (empty output, no error) and "read": a failure is
		// then a failure, not a log the run never had.
		out, err := b.Exec(ctx, l.host, "sh", "-c", `[ ! -f "$1" ] || cat -- "$1"`, "sh", src)
		if err != nil {
			errs = append(errs, fmt.Errorf("keep %s of %s: %w", src, l.host, err))
			continue
		}
		if len(out) == 0 {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return errors.Join(append(errs, fmt.Errorf("keep %s: %w", l.file, err))...)
		}
		if err := os.WriteFile(filepath.Join(dir, l.file), out, 0o644); err != nil {
			errs = append(errs, fmt.Errorf("keep %s: %w", l.file, err))
		}
	}
	return errors.Join(errs...)
}

// logHosts are the hosts across the wire that a run's tunnel entries may run on: the
// study's, and every client host of a Fleet.
func logHosts(b Backend, hosts []string) []string {
	out := append([]string(nil), hosts...)
	if f, ok := b.(Fleet); ok {
		for _, c := range f.Clients() {
			if !slices.Contains(out, c.Role) {
				out = append(out, c.Role)
			}
		}
	}
	return out
}
