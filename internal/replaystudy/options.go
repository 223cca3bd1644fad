package replaystudy

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/replay"
)

// Options are one `wirelab replay`, checked.
type Options struct {
	Log    *LogInfo
	Links  []link.Condition // the sweep, in order
	Shaper link.Shaper      // how delay is made ("" = auto)
	// Congestion is the lab hosts' TCP congestion control (lab.ResolveCongestion's forms).
	Congestion string
	Series     []Series
	Speed      replay.Speed
	// For stops each replay after this long (0 = at the log's end).
	For          time.Duration
	SkipBadLines bool
	Data         Data
	// Checksums records every table's checksum after each point's replay.
	Checksums  bool
	CheckWire  bool
	BufferPool string
	Tunnel     lab.TunnelOptions // with a tunnel series
	// Existing is a server to replay onto instead of starting one (--server-dsn); nil =
	// the lab starts one.
	Existing *engine.External
	// OutDir is the results directory: each point's sessions file is written there.
	OutDir string
}

// Data is what every point starts from: a dump loaded once (Dump) or sysbench's tables
// (Sysbench, Tables × TableSize rows).
type Data struct {
	Dump              string // absolute path of a plain SQL dump
	Sysbench          bool
	Tables, TableSize int
}

// String is the data set as progress lines and the spec name it.
func (d Data) String() string {
	if d.Sysbench {
		return fmt.Sprintf("sysbench %d tables x %d rows", d.Tables, d.TableSize)
	}
	return "dump " + d.Dump
}

// Engine is the server's kind: the log's.
func (o Options) Engine() engine.Kind { return o.Log.Engine }

// UsesTunnel says whether a series goes through the tunnel.
func (o Options) UsesTunnel() bool {
	for _, s := range o.Series {
		if s.Tunnel {
			return true
		}
	}
	return false
}

// UsesTLS says whether a series uses TLS.
func (o Options) UsesTLS() bool {
	for _, s := range o.Series {
		if s.TLS {
			return true
		}
	}
	return false
}

// dumpHead is how much of a dump checkDump reads to name the tool that wrote it.
const dumpHead = 4096

// checkDump refuses a dump that is not a readable file, or whose first lines say it was
// written by the other engine's dump tool (mysqldump/mariadb-dump or pg_dump); a file
// that names neither (hand-written SQL) is taken as it is.
func checkDump(path string, k engine.Kind) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("--dump %s: %w", path, err)
	}
	f, err := os.Open(abs)
	if err != nil {
		return "", fmt.Errorf("--dump: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("--dump %s: not a regular file: want a plain SQL dump (mariadb-dump, mysqldump or pg_dump -Fp)", path)
	}
	head, _ := bufio.NewReader(f).Peek(dumpHead)
	pg := bytes.Contains(head, []byte("PostgreSQL database dump"))
	my := bytes.Contains(head, []byte("MySQL dump")) || bytes.Contains(head, []byte("MariaDB dump"))
	switch {
	case bytes.HasPrefix(head, []byte("PGDMP")):
		return "", fmt.Errorf("--dump %s: a pg_dump archive (custom format): want a plain SQL dump, pg_dump -Fp (or pg_restore -f out.sql it)", path)
	case bytes.IndexByte(head, 0) >= 0:
		return "", fmt.Errorf("--dump %s: binary, not a plain SQL dump", path)
	case pg && k != engine.Postgres:
		return "", fmt.Errorf("--dump %s: a pg_dump file, and the log is %s's: want the dump of the server the log was captured on", path, k.Title())
	case my && k != engine.MariaDB:
		return "", fmt.Errorf("--dump %s: a MySQL/MariaDB dump, and the log is %s's: want the dump of the server the log was captured on", path, k.Title())
	}
	return abs, nil
}
