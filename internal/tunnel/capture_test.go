//go:build capture

package tunnel

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/mariadb"
	"github.com/wirelab/wirelab/internal/nstest"
)

// TestCaptureFuzzSeeds runs real MariaDB traffic through pairs of tunnel ends on loopback
// and writes what crossed the WAN (and, for the binlog, what the server sent its client)
// as the fuzz targets' seed corpora: sysbench oltp_read_write through a mux link with zstd
// frames; a binlog dump (mariadb-binlog --read-from-remote-server, the binlog sysbench
// wrote) through another, the exit recoding its events; a client connection without the
// mux; sysbench through a mux link under mutual TLS in its own records, with the keys the
// exit's exporter gave each direction. Seed files are named capture-*; inputs a fuzz run
// found and added stay. It rewrites testdata, so it is built only with the capture tag; as
// root, with MariaDB and sysbench installed:
//
//	go test -tags capture -run TestCaptureFuzzSeeds ./internal/tunnel/
func TestCaptureFuzzSeeds(t *testing.T) {
	nstest.SkipUnlessRoot(t, "mariadb-install-db", "mariadb", "mariadb-binlog", "sysbench")
	db := captureDB(t)
	dbAddr := net.JoinHostPort(db.Host, strconv.Itoa(db.Port))
	sb := sysbench(db, "prepare", "")
	if out, err := sb.CombinedOutput(); err != nil {
		t.Fatalf("sysbench prepare: %v\n%s", err, out)
	}
	seeds := &seedWriter{t: t, dir: filepath.Join("testdata", "fuzz")}
	seeds.clear()

	// sysbench through a mux link, zstd frames.
	link := captureLink(t, Config{Role: Exit, To: dbAddr, Compress: Zstd}, Config{Compress: Zstd, Mux: MuxOn, Links: 1})
	run(t, sysbench(db, "run", link.entry.Addr().String()))
	sbLink := link.stop(t)
	seedLinkFrames(seeds, "mux-sysbench", sbLink, muxPreface)

	// A binlog dump through a mux link: the exit recodes the events, in frames of at most
	// 4 KiB so that a seed holds several.
	link = captureLink(t, Config{Role: Exit, To: dbAddr, Compress: Zstd, GroupMaxSize: 4 << 10},
		Config{Compress: Zstd, Mux: MuxOn, Links: 1})
	client, clientAddr := newTap(t, link.entry.Addr().String())
	run(t, binlogDump(t, db, clientAddr))
	if n := link.entry.Stats().Mux.BinlogRestored; n == 0 {
		t.Fatal("the dump crossed without one event recoded: its seeds would carry no binlog records")
	}
	dumpLink := link.stop(t)
	seedLinkFrames(seeds, "mux-binlog", dumpLink, muxPreface)
	seedBinlog(seeds, client.only(t).back, dumpLink.back)

	// A client's own connection, no mux.
	link = captureLink(t, Config{Role: Exit, To: dbAddr}, Config{Mux: MuxOff})
	run(t, mariadbClient(db, link.entry.Addr().String(), "SELECT * FROM sbtest1 LIMIT 40; SELECT COUNT(*), SUM(k) FROM sbtest2"))
	conn := link.stop(t)
	seeds.write("FuzzFrameDecoder", "conn-entry-to-exit", leadingFrames(conn.fwd[len(preface):], 8<<10))
	seeds.write("FuzzFrameDecoder", "conn-exit-to-entry", leadingFrames(conn.back, 8<<10))

	// sysbench through a mux link under mutual TLS, in the link's own records.
	entryTLS, exitTLS, _ := testCerts(t)
	var keys linkKeys
	exitTLS.VerifyConnection = keys.keep
	link = captureLink(t, Config{Role: Exit, To: dbAddr, TLS: exitTLS}, Config{Mux: MuxOn, Links: 1, TLS: entryTLS})
	run(t, sysbench(db, "run", link.entry.Addr().String()))
	sealed := link.stop(t)
	e2x, x2e := keys.get(t)
	seedRecords(seeds, "mux-tls-entry-to-exit", e2x, sealed.fwd)
	seedRecords(seeds, "mux-tls-exit-to-entry", x2e, sealed.back)
	seeds.report()
}

// captureDB starts a MariaDB with a binary log on loopback, and its replication user.
func captureDB(t *testing.T) *mariadb.Server {
	t.Helper()
	dir := filepath.Join(nstest.SharedDir(t, "wlcap"), "srv")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(freePort(t))
	cfg := mariadb.Config{Dir: dir, BindAddress: "127.0.0.1", ServerID: 1, LogBin: true, BufferPool: "128M",
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))}
	cfg.Port, _ = strconv.Atoi(port)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	db, err := mariadb.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Stop(context.Background()); err != nil {
			t.Errorf("stop mariadb: %v", err)
		}
	})
	return db
}

// sysbench is oltp_read_write against addr ("" = the server itself), small and short.
func sysbench(db *mariadb.Server, cmd, addr string) *exec.Cmd {
	host, port := db.Host, strconv.Itoa(db.Port)
	if addr != "" {
		host, port, _ = net.SplitHostPort(addr)
	}
	return exec.Command("sysbench", "oltp_read_write", "--db-driver=mysql", "--mysql-host="+host,
		"--mysql-port="+port, "--mysql-user="+db.User, "--mysql-password="+db.Password, "--mysql-db="+db.DB,
		"--tables=2", "--table-size=500", "--threads=2", "--time=2", cmd)
}

// binlogDump reads the server's first binary log through addr as a replica would
// (COM_BINLOG_DUMP), as the replication user.
func binlogDump(t *testing.T, db *mariadb.Server, addr string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	user, pw, err := db.CreateReplUser(ctx)
	if err != nil {
		t.Fatal(err)
	}
	logs, err := db.Exec(ctx, "SHOW BINARY LOGS")
	if err != nil || len(strings.Fields(logs)) == 0 {
		t.Fatalf("SHOW BINARY LOGS: %q, %v", logs, err)
	}
	host, port, _ := net.SplitHostPort(addr)
	return exec.Command("mariadb-binlog", "--read-from-remote-server", "--skip-ssl", "--host="+host, "--port="+port,
		"--user="+user, "--password="+pw, "--to-last-log", strings.Fields(logs)[0])
}

// mariadbClient runs sql through addr as the bench user, without TLS (the tunnel would
// carry nothing but TLS records).
func mariadbClient(db *mariadb.Server, addr, sql string) *exec.Cmd {
	host, port, _ := net.SplitHostPort(addr)
	return exec.Command("mariadb", "--no-defaults", "--skip-ssl", "--host="+host, "--port="+port,
		"--user="+db.User, "--password="+db.Password, "--database="+db.DB, "--execute="+sql)
}

func run(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd.Args[0], err, stderr.Bytes())
	}
}

// tappedLink is an exit and an entry with a tap between them.
type tappedLink struct {
	entry, exit *running
	tap         *wanTap
}

// captureLink starts exit, a tap in front of it and an entry (role and To filled in) to
// the tap.
func captureLink(t *testing.T, exit, entry Config) *tappedLink {
	t.Helper()
	x := startTunnel(t, exit)
	tap, addr := newTap(t, x.Addr().String())
	entry.Role, entry.To = Entry, addr
	return &tappedLink{entry: startTunnel(t, entry), exit: x, tap: tap}
}

// stop ends both tunnel ends and returns the one WAN connection that crossed the tap.
func (l *tappedLink) stop(t *testing.T) *tapped {
	t.Helper()
	l.entry.stop()
	l.exit.stop()
	return l.tap.only(t)
}

// linkKeys keeps the record keys a mux link's exporter gives each direction at epoch 0;
// keep is the exit's tls.Config.VerifyConnection, which runs after the exporter is ready.
type linkKeys struct {
	mu       sync.Mutex
	e2x, x2e [][]byte
}

func (k *linkKeys) keep(cs tls.ConnectionState) error {
	e2x, err := exportRecordKey(cs, true, 0)
	if err != nil {
		return err
	}
	x2e, err := exportRecordKey(cs, false, 0)
	if err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.e2x, k.x2e = append(k.e2x, e2x), append(k.x2e, x2e)
	return nil
}

func (k *linkKeys) get(t *testing.T) (e2x, x2e []byte) {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.e2x) != 1 {
		t.Fatalf("%d TLS sessions, want the one link's", len(k.e2x))
	}
	return k.e2x[0], k.x2e[0]
}

// tapCap is how much of each direction a tap keeps.
const tapCap = 4 << 20

// wanTap forwards each connection to an address and keeps the first tapCap bytes of each
// direction.
type wanTap struct {
	mu    sync.Mutex
	conns []*tapped
}

// tapped is one connection's bytes: fwd toward the tapped address, back from it.
type tapped struct {
	mu        sync.Mutex
	fwd, back []byte
}

func newTap(t *testing.T, to string) (*wanTap, string) {
	t.Helper()
	tap := &wanTap{}
	addr := serveTCP(t, func(c net.Conn) {
		up, err := net.Dial("tcp", to)
		if err != nil {
			return
		}
		defer up.Close()
		rec := &tapped{}
		tap.mu.Lock()
		tap.conns = append(tap.conns, rec)
		tap.mu.Unlock()
		var wg sync.WaitGroup
		wg.Go(func() { rec.copy(up, c, &rec.fwd) })
		rec.copy(c, up, &rec.back)
		wg.Wait()
	})
	return tap, addr
}

// copy forwards src to dst until either ends, keeping what passed in keep; then it
// half-closes dst.
func (r *tapped) copy(dst, src net.Conn, keep *[]byte) {
	defer dst.(*net.TCPConn).CloseWrite()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			r.mu.Lock()
			*keep = append(*keep, buf[:min(n, tapCap-len(*keep))]...)
			r.mu.Unlock()
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// only returns the tap's one connection (a copy); t fails when there were more.
func (w *wanTap) only(t *testing.T) *tapped {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.conns) != 1 {
		t.Fatalf("the tap carried %d connections, want 1", len(w.conns))
	}
	c := w.conns[0]
	c.mu.Lock()
	defer c.mu.Unlock()
	return &tapped{fwd: bytes.Clone(c.fwd), back: bytes.Clone(c.back)}
}

// leadingFrames is the whole frames at the start of wire, at most max bytes of them (at
// least the first frame).
func leadingFrames(wire []byte, max int) []byte {
	end := 0
	for end+headerLen <= len(wire) {
		next := end + headerLen + int(binary.BigEndian.Uint32(wire[end+1:end+5]))
		if next > len(wire) || (next > max && end > 0) {
			break
		}
		end = next
	}
	return wire[:end]
}

// frameContents decodes wire's frames and returns each one's raw bytes (its records, on
// a mux link), up to the first frame that does not decode.
func frameContents(wire []byte) [][]byte {
	d := newFrameDecoder(bytes.NewReader(wire), LongMuxWindow) // ends at their defaults
	defer d.close()
	var out [][]byte
	for {
		_, p, err := d.next()
		if err != nil {
			return out
		}
		out = append(out, bytes.Clone(p))
	}
}
