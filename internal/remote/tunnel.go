package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/hosts"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/tunnel"
)

// StartTunnel implements study.Backend: `wirelab tunnel exit` on the server host,
// listening on the server's data address (lab.TunnelExitPort) and forwarding to
// o.ServerHost:o.ServerPort (default: the server's own address and its engine's port),
// and `wirelab tunnel entry` on entryRole's host on 127.0.0.1:lab.TunnelEntryPort. The
// WAN leg between them is traffic between the two hosts on a port other than SSH's, so it
// crosses the shaped link. Mutual TLS: certificates made here (tunnel.GenerateCerts, as
// the lab makes them), each end given the CA and its own pair, 0600, in a directory of the
// staged one. Both ends run from the staged wirelab (self is not used: it is this
// machine's) as helpers: logged in the staged directory, stopped by Down, and by `down
// --hosts` after a kill -9, as their command lines name that directory.
func (b *Backend) StartTunnel(ctx context.Context, _ string, entryRole string, o lab.TunnelOptions) (string, error) {
	entry := b.hostOf(entryRole)
	if entry == b.server {
		return "", fmt.Errorf("start tunnel: its entry goes on the host across the wire from the server, not on %s", entryRole)
	}
	if b.server == nil {
		return "", errors.New("start tunnel: its exit would run on an existing server's host, which wirelab does not log in to")
	}
	entries := []*host{entry}
	if entryRole == lab.Client && b.far == lab.Client {
		entries = b.clients // a split load: every client's sysbench dials its own entry
	}
	exitAddr := b.server.inv.PeerAddress()
	if o.ServerHost == "" {
		o.ServerHost = exitAddr
	}
	if o.ServerPort == 0 {
		o.ServerPort = b.engine.Spec().Port
	}
	certs, err := b.tunnelCerts(exitAddr)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(certs)
	for i, h := range append([]*host{b.server}, entries...) {
		exit, e := lab.TunnelEnds(path.Join(h.stage.Dir, "tunnel-certs"), exitAddr, o)
		if i == 0 {
			e = exit
		}
		if err := b.startTunnelEnd(ctx, h, e, certs); err != nil {
			return "", fmt.Errorf("start tunnel %s on %s: %w", e.Config.Role, h.inv.Name, err)
		}
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(lab.TunnelEntryPort)), nil
}

// startTunnelEnd copies e's certificates from certs to h, starts it from the staged
// wirelab and waits until it listens (a dry run prints one check).
func (b *Backend) startTunnelEnd(ctx context.Context, h *host, e lab.TunnelEnd, certs string) error {
	if err := b.copyCerts(ctx, h, certs, path.Dir(e.Config.TLSCA), e.Certs...); err != nil {
		return err
	}
	logPath := path.Join(h.stage.Dir, e.Name+".log")
	p, err := h.h.Start(ctx, e.Name, e.Config.Argv(h.stage.Agent), logPath)
	if err != nil {
		return err
	}
	b.track(p)
	return lab.AwaitListen(ctx, e.Port, lab.ListenProbe{
		Listening: func() bool {
			out, err := h.h.Run(ctx, lab.ListenCheck(e.Port)...)
			return b.o.DryRun != nil || err == nil && strings.TrimSpace(string(out)) != ""
		},
		Exited: func() bool {
			st, err := hosts.ProcFS(ctx, h.h).Stat(p.Pid())
			return err != nil || st.Zombie()
		},
		Tail: func() string { return logTail(ctx, h.h, logPath) },
	})
}

// tunnelCerts makes the tunnel's CA and both ends' pairs in a private temp directory of
// this machine (the caller removes it); a dry run makes none and returns "".
func (b *Backend) tunnelCerts(exitAddr string) (string, error) {
	if b.o.DryRun != nil {
		return "", nil
	}
	dir, err := os.MkdirTemp("", "wirelab-tunnel-certs-")
	if err != nil {
		return "", fmt.Errorf("start tunnel: %w", err)
	}
	if err := tunnel.GenerateCerts(dir, []string{exitAddr}); err != nil {
		return "", errors.Join(fmt.Errorf("start tunnel: %w", err), os.RemoveAll(dir))
	}
	return dir, nil
}

// copyCerts copies files from local directory from to dir on h (0700), each 0600; a dry
// run prints the copies.
func (b *Backend) copyCerts(ctx context.Context, h *host, from, dir string, files ...string) error {
	if _, err := h.h.Run(ctx, "mkdir", "-p", "-m", "0700", dir); err != nil {
		return err
	}
	for _, f := range files {
		var data []byte
		if from != "" {
			var err error
			if data, err = os.ReadFile(filepath.Join(from, f)); err != nil {
				return err
			}
		}
		if err := h.h.Copy(ctx, strings.NewReader(string(data)), path.Join(dir, f), 0o600); err != nil {
			return err
		}
	}
	return nil
}
