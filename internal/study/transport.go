package study

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
)

// TransportPaths are the four ways to reach MySQL in the unix-socket-vs-TCP study, in the
// study's order (the first is the 100% reference).
var TransportPaths = []string{"socket", "local-tcp", "remote-tcp", "remote-socket"}

// TransportExtra is the study's workload: 25 point selects and a 5-row range per
// transaction, no BEGIN/COMMIT, 95th percentile.
var TransportExtra = []string{"--point-selects=25", "--range_size=5", "--skip_trx=on", "--percentile=95"}

// socatPort is where the server-side socat exposes mysqld's socket over TCP.
const socatPort = 3307

// ParsePaths validates a comma-separated subset of TransportPaths.
func ParsePaths(v string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		ok := false
		for _, p := range TransportPaths {
			ok = ok || p == f
		}
		if !ok {
			return nil, fmt.Errorf("--paths %q: %q is not a path; want a comma-separated subset of %s", v, f, strings.Join(TransportPaths, ","))
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out, nil
}

// Transport builds the transport study's cells: every path at the same thread count.
type Transport struct {
	Paths   []string
	Threads []int
	Common  Cell
	Repeat  int
}

// Cells returns the matrix; socket paths are filled in by the prelude once the lab exists.
func (t Transport) Cells() []PlannedCell {
	var cells []PlannedCell
	for r := 1; r <= max(t.Repeat, 1); r++ {
		for _, th := range t.Threads {
			for _, path := range t.Paths {
				c := t.Common
				c.Study, c.Series, c.Transport, c.Channel, c.Threads, c.Repeat = "transport", path, path, "direct", th, r
				c.Extra = append(append([]string(nil), TransportExtra...), t.Common.Extra...)
				switch path {
				case "socket", "local-tcp":
					c.ClientHost = lab.Server
				default:
					c.ClientHost = lab.Client
				}
				if path == "local-tcp" {
					c.Host, c.Port = "127.0.0.1", 3306
				}
				if path == "remote-tcp" {
					c.Host, c.Port = lab.HostAddr[lab.Server], 3306
				}
				cells = append(cells, PlannedCell{Cell: c})
			}
		}
	}
	return cells
}

// Prelude points the socket cells at mysqld's socket and, for remote-socket, starts the
// study's two socat hops: TCP-LISTEN→UNIX-CONNECT next to mysqld, UNIX-LISTEN→TCP on the
// client; both are lab processes, stopped by teardown.
func (t Transport) Prelude(ctx context.Context, eng *Engine, plan *Plan) error {
	st := eng.Lab.State
	remoteSock := filepath.Join(st.TempDir, "remote-mysqld.sock")
	needSocat := false
	for i := range plan.Cells {
		c := &plan.Cells[i]
		switch c.Transport {
		case "socket":
			c.Socket = st.DB.Socket
		case "remote-socket":
			c.Socket, needSocat = remoteSock, true
		}
	}
	if !needSocat {
		return nil
	}
	return StartSocatHops(ctx, eng.Lab, st.DB.Socket, remoteSock)
}

// StartSocatHops runs the study's socat pair and waits until the client-side socket exists
// and the server side accepts TCP.
func StartSocatHops(ctx context.Context, l *lab.Lab, serverSock, clientSock string) error {
	port := strconv.Itoa(socatPort)
	if _, err := l.StartProc(lab.Server, "socat-server", []string{"socat",
		"TCP-LISTEN:" + port + ",bind=" + lab.HostAddr[lab.Server] + ",reuseaddr,fork,backlog=1024",
		"UNIX-CONNECT:" + serverSock}, nil); err != nil {
		return err
	}
	if _, err := l.StartProc(lab.Client, "socat-client", []string{"socat",
		"UNIX-LISTEN:" + clientSock + ",fork,reuseaddr,unlink-early,mode=777,backlog=1024",
		"TCP:" + lab.HostAddr[lab.Server] + ":" + port}, nil); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := os.Stat(clientSock)
		if err == nil {
			if _, perr := l.Exec(ctx, lab.Client, "bash", "-c", "exec 3<>/dev/tcp/"+lab.HostAddr[lab.Server]+"/"+port); perr == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("socat hops did not come up within 10s (see %s/socat-*.log)", l.State.TempDir)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
