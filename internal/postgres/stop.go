package postgres

import (
	"context"
	"syscall"

	"github.com/wirelab/wirelab/internal/dbserver"
	"github.com/wirelab/wirelab/internal/procfs"
)

// Stop shuts the server down: SIGINT (PostgreSQL's "fast" shutdown: roll back open
// transactions, disconnect clients, checkpoint), then SIGKILL to the postmaster and its
// children once the stop timeout passes or ctx ends, so no orphaned backend keeps the
// socket or shared memory. SIGTERM ("smart") would wait for every client to leave.
// Stop is idempotent and safe on a nil Server, one rebuilt from a state file with only
// Pid set, and one whose process is already gone.
func (s *Server) Stop(ctx context.Context) error {
	if s == nil {
		return nil
	}
	return s.proc.Stop(ctx, kind, s.Pid, s.stopTimeout, s.logger)
}

// kind is every postmaster: its comm is "postgres" whatever its title in ps says; SIGINT
// is the fast shutdown.
var kind = dbserver.Kind{Label: "postgres", Comm: []string{"postgres"}, Signal: syscall.SIGINT,
	StopTimeout: DefaultStopTimeout}

// alive reports whether Pid is still a postmaster (a recycled pid is not ours to kill).
func (s *Server) alive() bool { return s.proc.Process(kind, s.Pid).Alive() }

// Pids are the postmaster and the processes it forked (one backend per connection, the
// checkpointer, the WAL writer, ...): the server's CPU is theirs together.
func (s *Server) Pids() []int {
	if s == nil || s.Pid <= 0 {
		return nil
	}
	return procfs.FS{}.Tree(s.Pid)
}
