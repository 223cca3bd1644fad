package cli

import (
	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/remote"
)

// cmdAgentServer is `wirelab agent <engine>`, which remote.Start runs on a server host
// (remote.Serve): the server of a study driven from another machine, reported in
// --dir/server.json and stopped on SIGTERM, SIGINT or once --for has passed.
func cmdAgentServer(p *Process, kind engine.Kind, args []string) error {
	name := "agent " + string(kind)
	fs := newFlagSet(p, name, "internal: run a "+kind.Title()+" server on this host for a study driven from another one",
		"wirelab "+name+" --dir /tmp/wirelab-x/"+string(kind)+" --bind 198.18.0.2 --for 4h")
	f := remote.AddAgentFlags(fs, kind)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	o, err := f.Options()
	if err != nil {
		return &UsageError{err}
	}
	ctx, stop := untilInterrupt(p) // SIGTERM from remote.Server.Stop: stop the server, exit
	defer stop()
	return remote.Serve(ctx, o, p.Logger.With("component", "agent-"+string(kind)))
}
