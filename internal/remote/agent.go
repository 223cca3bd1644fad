package remote

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
)

// The command line of `wirelab agent <engine>`, which Start runs on a server host: Start
// renders it from ServerOptions (AgentArgv) and the agent parses it back into
// ServerOptions (AddAgentFlags), both here, so the two sides cannot disagree on a flag's
// name or form.

// AgentArgv is the agent's command line, `wirelab agent <engine>`, for o with its
// defaults filled (Start fills them).
func (o ServerOptions) AgentArgv() []string {
	argv := []string{o.Agent, "agent", string(o.Engine), "--dir", o.Dir, "--bind", o.Bind,
		"--port", strconv.Itoa(o.Port), "--for", o.For.String()}
	if o.BufferPool != "" {
		argv = append(argv, "--buffer-pool", o.BufferPool)
	}
	if o.ServerID != 0 {
		argv = append(argv, "--server-id", strconv.Itoa(o.ServerID))
	}
	if o.LogBin {
		argv = append(argv, "--log-bin")
	}
	for _, k := range slices.Sorted(maps.Keys(o.Extra)) {
		argv = append(argv, "--set", k+"="+o.Extra[k])
	}
	return argv
}

// DefaultAgentBufferPool is the agent's --buffer-pool when none is given.
const DefaultAgentBufferPool = "1G"

// AgentFlags are the flags of `wirelab agent <engine>` on a flag set, turned into
// ServerOptions by Options.
type AgentFlags struct {
	o ServerOptions
}

// AddAgentFlags registers the flags of `wirelab agent <kind>` on fs.
func AddAgentFlags(fs *flag.FlagSet, kind engine.Kind) *AgentFlags {
	f := &AgentFlags{o: ServerOptions{Engine: kind, Extra: map[string]string{}}}
	o := &f.o
	fs.StringVar(&o.Dir, "dir", "", "the server's directory (datadir, socket, certificates, logs, server.json); created if missing")
	fs.StringVar(&o.Bind, "bind", "", "the address clients dial: the server's listen address (a comma-separated list for more)")
	fs.IntVar(&o.Port, "port", Port(kind), "TCP port")
	fs.StringVar(&o.BufferPool, "buffer-pool", DefaultAgentBufferPool, "the data cache (innodb_buffer_pool_size, shared_buffers): "+lab.BufferPoolForm)
	fs.DurationVar(&o.For, "for", DefaultFor, "stop the server and exit after this long, if nothing stopped it before")
	fs.IntVar(&o.ServerID, "server-id", 0, "MariaDB: server_id (a replication source and its replica differ)")
	fs.BoolVar(&o.LogBin, "log-bin", false, "MariaDB: write a binary log (GTIDs, ROW), as a replication source and replica do")
	fs.Func("set", "MariaDB: one more [mysqld] setting, name=value (repeatable)", func(v string) error {
		k, val, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("want name=value, got %q", v)
		}
		o.Extra[strings.TrimSpace(k)] = val
		return nil
	})
	return f
}

// Options checks the parsed flags: every error names the flag and the form it accepts.
func (f *AgentFlags) Options() (ServerOptions, error) {
	o := f.o
	name := "agent " + string(o.Engine)
	if !filepath.IsAbs(o.Dir) || o.Bind == "" || o.For <= 0 {
		return o, fmt.Errorf("%s: --dir (an absolute path), --bind and a positive --for are required", name)
	}
	if o.Port < 1 || o.Port > 65535 {
		return o, fmt.Errorf("%s: --port %d: want 1..65535", name, o.Port)
	}
	if err := lab.CheckBufferPool(o.BufferPool); err != nil {
		return o, fmt.Errorf("%s: %w", name, err)
	}
	if len(o.Extra) == 0 {
		o.Extra = nil
	}
	return o, nil
}

// replication says whether o asks for any of MariaDB's replication settings.
func (o ServerOptions) replication() bool { return o.ServerID != 0 || o.LogBin || len(o.Extra) > 0 }

// Serve is `wirelab agent <engine>` on the server host: it starts the server in o.Dir,
// reports it in o.Dir/StateFile (or the error that stopped it there), and stops it once
// ctx ends (SIGTERM from Server.Stop) or o.For has passed (wirelab was killed and never
// stopped it).
func Serve(ctx context.Context, o ServerOptions, log *slog.Logger) error {
	name := "agent " + string(o.Engine)
	e, err := engineOf(o.Engine)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	st, stop, err := e.StartHere(ctx, o, log)
	if err != nil {
		err = fmt.Errorf("%s: %w", name, err)
		if werr := WriteState(o.Dir, ServerState{Error: err.Error()}); werr != nil {
			return errors.Join(err, werr)
		}
		return err
	}
	st.AgentPid = os.Getpid()
	err = WriteState(o.Dir, st)
	if err == nil {
		log.Info(string(o.Engine)+" serving", "pid", st.Pid, "addr", fmt.Sprintf("%s:%d", st.Host, st.Port), "for", o.For)
		t := time.NewTimer(o.For)
		select {
		case <-ctx.Done():
			log.Info("stopping " + string(o.Engine) + ": signalled")
		case <-t.C:
			log.Info("stopping "+string(o.Engine)+": --for has passed", "for", o.For)
		}
		t.Stop()
	}
	// Not ctx: it is cancelled by now.
	if serr := stop(context.Background()); serr != nil {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
