package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path"
	"strings"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/hosts"
)

// launcher runs a load driver's commands on a remote host, in wirelab's directory there.
type launcher struct {
	h   hosts.Host
	dir string
}

// cdScript runs "$@" in the directory $0: a Streamed's working directory on the host.
const cdScript = `cd "$0" && exec "$@"`

// Launch implements execx.Launcher. The command runs to completion on the host; its
// output streams back line by line; ctx ending kills it there. A relative working
// directory is one in wirelab's directory on the host (each client's copy of the TLS
// files: clientCerts).
func (l launcher) Launch(ctx context.Context, s execx.Streamed) (string, string, error) {
	argv := append([]string{s.Name}, s.Args...)
	if s.Dir != "" && !path.IsAbs(s.Dir) {
		s.Dir = path.Join(l.dir, s.Dir)
	}
	if s.Dir != "" {
		argv = append([]string{"sh", "-c", cdScript, s.Dir}, argv...)
	}
	return l.h.Stream(ctx, argv, s.Env, s.OnStart, s.OnStdout)
}

// TempFile implements execx.Launcher: a 0600 file in wirelab's directory on the host.
func (l launcher) TempFile(ctx context.Context, data []byte) (string, func(), error) {
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", nil, fmt.Errorf("name a private file: %w", err)
	}
	p := path.Join(l.dir, "private-"+hex.EncodeToString(r[:]))
	if err := l.h.Copy(ctx, strings.NewReader(string(data)), p, 0o600); err != nil {
		return "", nil, err
	}
	return p, func() { _, _ = l.h.Run(context.WithoutCancel(ctx), "rm", "-f", "--", p) }, nil
}

// Local implements execx.Launcher: the host's files are not this machine's.
func (launcher) Local() bool { return false }
