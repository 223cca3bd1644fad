package study

import (
	"context"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// Study is one plug-in of the Session: what a study does differently from the others.
//
// The Session calls, in this order: Needs (before anything is created), Setup (once the
// lab, its servers and the data set are up), then Next and Measure for each point until
// Next says there is no other point or Ctrl-C comes, Finish after the last point, and
// Teardown always once Needs was called — after a failed Setup too — before the lab
// itself is removed. Teardown must be safe on a half-done Setup.
type Study interface {
	// Name is results.json's "study" and the report section that draws it.
	Name() string
	// Needs is what the Session must build before Setup.
	Needs() Needs
	// Setup prepares what only this study uses on the lab (a tunnel, socat hops,
	// replication); it may measure (calibration) and refine e.Run's spec and notes.
	Setup(ctx context.Context, e *Env) error
	// Next returns the next point to measure, given every point measured so far in run
	// order (a search decides its next load from the last result); false when done.
	Next(done []result.Point) (Cell, bool)
	// Measure measures one point on the wire the Session has put in place for it. An
	// error means the point could not be measured; the Session keeps it as failed.
	Measure(ctx context.Context, e *Env, c Cell) (result.Point, error)
	// Finish adds the study's closing notes (headline figures) to the run.
	Finish(run *result.Run)
	// Teardown stops what Setup started that the lab's teardown does not (connections,
	// goroutines). Idempotent.
	Teardown()
}

// Cell is one point as the Session sees it: the wire it needs, a label for progress and
// how long it is expected to take. Each study's Measure knows its concrete type.
type Cell interface {
	// Wire is the wire condition the point needs; nil leaves the wire as it is.
	Wire() *link.Condition
	Label() string
	Expected() time.Duration
}

// Remainder is implemented by studies that know how long their remaining points take,
// for the ETA. A study whose points depend on results (a search) does not.
type Remainder interface {
	Remaining() time.Duration
}

// Needs is what a study needs the Session to build before its Setup.
type Needs struct {
	// Hosts are the end hosts besides the wire. Hosts[0] is the one across the wire from
	// the server (client or replica): the wire's "down" direction and `link check` face it.
	Hosts []string
	// Servers are the database servers to start, in order; the data set is prepared on the
	// first one over its unix socket (an existing server's over TCP).
	Servers []Server
	Data    DataSet
	// Condition is the wire the lab starts with; Shaper how delay is made ("" = auto).
	Condition link.Condition
	Shaper    link.Shaper
	// Congestion is the TCP congestion control of the lab's hosts, as asked (the forms
	// lab.ResolveCongestion takes); a lab option, not the wire's.
	Congestion string
	// CheckWire runs `link check` after every change of the wire and records it on the
	// following points.
	CheckWire bool
	// Tunnel says a series goes through wirelab's tunnel, whose ends run in the lab's
	// client and server hosts (a backend without the lab refuses it).
	Tunnel bool
	// ClientThreads are the thread counts of the study's cells whose driver runs on the
	// client, for a study that can load the server from several client hosts (run,
	// bandwidth): a backend with more than one checks each splits among them
	// (CheckSplit) before it makes anything, and refuses a study that leaves this nil.
	ClientThreads []int
	// Spec and Notes start results.json; Setup may refine them through Env.Run.
	Spec  result.Spec
	Notes []string
	// Programs are what the study's own helpers run on its hosts besides the load driver
	// and the server (transport's socat): a backend on other machines checks them there
	// before it changes anything.
	Programs []Program
}

// Program is one program a study runs on a host, and why (for the error that asks the
// user to install it, or to drop the option that needs it).
type Program struct {
	Host, Name, Why string
}

// Server is one database server a study needs.
type Server struct {
	Host string
	DB   lab.DBOptions
	// Existing, only on Servers[0], is a server wirelab does not start: Host then runs no
	// database but routes to it (lab.Options.Outside), and DB is not used.
	Existing *engine.External
	// Loopback: a load driver on the server's own host reaches it over TCP at 127.0.0.1
	// (transport's local-tcp). The lab's servers always listen there; a real host's only
	// when asked, as another server of that host may hold the port.
	Loopback bool
}
