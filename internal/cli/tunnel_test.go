package cli

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer lets a test read what a command running in another goroutine writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// tunnelCertDir writes a CA and both ends' certificates through the CLI.
func tunnelCertDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "certs")
	p, _, errb, _ := testProcess(t, false)
	if code := Main([]string{"tunnel", "certs", "--out", dir, "--hosts", "127.0.0.1"}, p); code != 0 {
		t.Fatalf("tunnel certs: exit %d: %s", code, errb)
	}
	return dir
}

func TestTunnelBadInput(t *testing.T) {
	certs := tunnelCertDir(t)
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.pem")
	badConfig := filepath.Join(t.TempDir(), "tunnel.yaml")
	if err := os.WriteFile(badConfig, []byte("to: 127.0.0.1:4406\ncompression: zstd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	exit := []string{"tunnel", "exit", "--to", "127.0.0.1:3306"}
	entry := []string{"tunnel", "entry", "--listen", "127.0.0.1:0"}
	with := func(base []string, more ...string) []string { return append(append([]string{}, base...), more...) }
	tlsFlags := func(cert, key, ca string) []string {
		return []string{"--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--tls-ca", ca}
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"wildcard ipv4 listen", with(exit, "--listen", "0.0.0.0:4406"), "--listen"},
		{"wildcard ipv6 listen", with(exit, "--listen", "[::]:4406"), "--listen"},
		{"empty host listen", with(exit, "--listen", ":4406"), "--listen"},
		{"listen without port", with(exit, "--listen", "127.0.0.1"), "--listen"},
		{"listen port out of range", with(exit, "--listen", "127.0.0.1:70000"), "--listen"},
		{"missing --listen", exit, "--listen and --to are required"},
		{"missing --to", entry, "--listen and --to are required"},
		{"to port 0", with(entry, "--to", "127.0.0.1:0"), "--to"},
		{"to without host", with(entry, "--to", ":4406"), "--to"},
		{"compress gzip", with(entry, "--to", "127.0.0.1:4406", "--compress", "gzip"), "--compress"},
		{"group size 0", with(entry, "--to", "127.0.0.1:4406", "--group-max-size", "0"), "--group-max-size"},
		{"group size too large", with(entry, "--to", "127.0.0.1:4406", "--group-max-size", "32MiB"), "--group-max-size"},
		{"group size not a size", with(entry, "--to", "127.0.0.1:4406", "--group-max-size", "lots"), "group-max-size"},
		{"group timeout 0", with(entry, "--to", "127.0.0.1:4406", "--group-timeout", "0s"), "--group-timeout"},
		{"level 30", with(entry, "--to", "127.0.0.1:4406", "--level", "30"), "--level"},
		{"level 0", with(entry, "--to", "127.0.0.1:4406", "--level", "0"), "--level"},
		{"level words", with(entry, "--to", "127.0.0.1:4406", "--level", "max"), "--level"},
		{"mux maybe", with(entry, "--to", "127.0.0.1:4406", "--mux", "maybe"), "--mux"},
		{"window not a power of two", with(entry, "--to", "127.0.0.1:4406", "--window", "3MiB"), "--window"},
		{"window too large", with(entry, "--to", "127.0.0.1:4406", "--window", "1GiB"), "--window"},
		{"binlog strip", with(exit, "--listen", "127.0.0.1:0", "--binlog", "strip"), "--binlog \"strip\": want recode or raw"},
		{"binlog raw on an entry", with(entry, "--to", "127.0.0.1:4406", "--binlog", "raw"), "--binlog raw: the exit recodes"},
		{"unexpected argument", with(entry, "--to", "127.0.0.1:4406", "extra"), "unexpected arguments"},
		{"unknown flag", with(entry, "--to", "127.0.0.1:4406", "--compression"), "compression"},
		{"only --tls-cert", with(entry, "--to", "127.0.0.1:4406", "--tls-cert", filepath.Join(certs, "entry.pem")), "--tls-cert, --tls-key and --tls-ca"},
		{"no --tls-ca", with(entry, "--to", "127.0.0.1:4406", "--tls-cert", filepath.Join(certs, "entry.pem"),
			"--tls-key", filepath.Join(certs, "entry-key.pem")), "--tls-cert, --tls-key and --tls-ca"},
		{"missing cert file", with([]string{"tunnel", "entry", "--to", "127.0.0.1:4406"},
			tlsFlags(missing, filepath.Join(certs, "entry-key.pem"), filepath.Join(certs, "ca.pem"))...), "--tls-cert"},
		{"garbage key file", with([]string{"tunnel", "entry", "--to", "127.0.0.1:4406"},
			tlsFlags(filepath.Join(certs, "entry.pem"), garbage, filepath.Join(certs, "ca.pem"))...), "--tls-key"},
		{"missing ca file", with([]string{"tunnel", "exit", "--to", "127.0.0.1:3306"},
			tlsFlags(filepath.Join(certs, "exit.pem"), filepath.Join(certs, "exit-key.pem"), missing)...), "--tls-ca"},
		{"ca file without a certificate", with([]string{"tunnel", "exit", "--to", "127.0.0.1:3306"},
			tlsFlags(filepath.Join(certs, "exit.pem"), filepath.Join(certs, "exit-key.pem"), garbage)...), "--tls-ca"},
		{"config with an unknown key", with(entry, "--config", badConfig), `unknown key "compression"`},
		{"missing config file", with(entry, "--config", missing), "--config"},
		{"wildcard metrics address", with(entry, "--to", "127.0.0.1:4406", "--metrics-listen", "0.0.0.0:9464"), "--metrics-listen"},
		{"unknown subcommand", []string{"tunnel", "middle"}, "unknown subcommand"},
		{"certs without --out", []string{"tunnel", "certs"}, "--out"},
		{"certs with empty --hosts", []string{"tunnel", "certs", "--out", t.TempDir(), "--hosts", " , "}, "--hosts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, out, errb, f := testProcess(t, false)
			code := Main(c.args, p)
			if code != 2 {
				t.Errorf("exit %d, want 2 (usage); stderr: %s", code, errb)
			}
			if !strings.Contains(errb.String(), c.want) {
				t.Errorf("stderr %q does not name %q", errb.String(), c.want)
			}
			if strings.Contains(out.String(), "tunnel "+c.args[1]+":") {
				t.Errorf("a tunnel started and printed stats: %s", out)
			}
			if len(f.Calls) > 0 {
				t.Errorf("bad input ran commands: %v", f.Lines())
			}
		})
	}
}

// Help lists every flag of an end, the service's among them.
func TestTunnelEndHelp(t *testing.T) {
	for _, role := range []string{"entry", "exit"} {
		p, _, errb, _ := testProcess(t, false)
		if code := Main([]string{"tunnel", role, "--help"}, p); code != 0 {
			t.Fatalf("%s --help: exit %d", role, code)
		}
		for _, f := range []string{"listen", "to", "tls-cert", "tls-key", "tls-ca", "stats", "stats-every", "compress", "level", "mux",
			"links", "link-cpus", "window", "group-max-size", "group-timeout", "group-wait", "binlog", "allow-wildcard",
			"metrics-listen", "drain-timeout", "config"} {
			if !strings.Contains(errb.String(), "\n  --"+f+" ") && !strings.Contains(errb.String(), "\n  --"+f+"\n") {
				t.Errorf("tunnel %s --help does not list --%s", role, f)
			}
		}
	}
}

// TestTunnelInterrupt: the first interrupt stops a serving tunnel cleanly (exit 0, a
// message of its own rather than the studies' "finishing the current point").
func TestTunnelInterrupt(t *testing.T) {
	certs := tunnelCertDir(t)
	p, _, _, _ := testProcess(t, false)
	var errb lockedBuffer
	p.Stderr = &errb
	sig := make(chan os.Signal, 2)
	p.Interrupts = sig
	args := []string{"tunnel", "exit", "--listen", "127.0.0.1:0", "--to", "127.0.0.1:3306",
		"--tls-cert", filepath.Join(certs, "exit.pem"), "--tls-key", filepath.Join(certs, "exit-key.pem"),
		"--tls-ca", filepath.Join(certs, "ca.pem")}
	done := make(chan int, 1)
	go func() { done <- Main(args, p) }()
	// Let it get to Serve; an interrupt that arrives earlier must work just the same.
	time.Sleep(50 * time.Millisecond)
	sig <- os.Interrupt
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d after one interrupt, want 0; stderr: %s", code, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("tunnel did not stop within 10s of an interrupt")
	}
	msg := errb.String()
	if !strings.Contains(msg, "tunnel exit: interrupt: closing the listener") || strings.Contains(msg, "current point") {
		t.Errorf("interrupt message: %q", msg)
	}
}

// TestTunnelRelaysUntilInterrupted runs both ends through the CLI with mutual TLS and
// relays a round trip to an echo server before stopping them, with the mux off and on.
func TestTunnelRelaysUntilInterrupted(t *testing.T) {
	for _, mux := range []string{"off", "on"} {
		t.Run("mux="+mux, func(t *testing.T) { testTunnelRelays(t, mux) })
	}
}

func testTunnelRelays(t *testing.T, mux string) {
	certs := tunnelCertDir(t)
	echo := echoListener(t)
	exitAddr, entryAddr := freeAddr(t), freeAddr(t)
	ends := []cliEnd{startCLIEnd(t, "exit", exitAddr, echo, certs, "--mux", mux), startCLIEnd(t, "entry", entryAddr, exitAddr, certs, "--mux", mux)}
	defer func() {
		for _, e := range ends {
			e.stop(t, os.Interrupt, 0)
		}
	}()
	c := dialEntry(t, entryAddr)
	pingEcho(t, c, "ping")
}

// cliEnd is a tunnel end run by Main in this process, its signals sent by the test.
type cliEnd struct {
	sig     chan os.Signal
	hangups chan os.Signal
	done    chan int
	errb    *lockedBuffer
}

// startCLIEnd runs `wirelab tunnel <role>` with mutual TLS from certs and more flags.
func startCLIEnd(t *testing.T, role, listen, to, certs string, more ...string) cliEnd {
	t.Helper()
	p, _, _, _ := testProcess(t, false)
	e := cliEnd{sig: make(chan os.Signal, 2), hangups: make(chan os.Signal, 1), done: make(chan int, 1), errb: &lockedBuffer{}}
	p.Interrupts, p.Stderr = e.sig, e.errb
	p.Hangups = func() (<-chan os.Signal, func()) { return e.hangups, func() {} }
	args := append([]string{"tunnel", role, "--listen", listen, "--to", to, "--tls-cert", filepath.Join(certs, role+".pem"),
		"--tls-key", filepath.Join(certs, role+"-key.pem"), "--tls-ca", filepath.Join(certs, "ca.pem")}, more...)
	go func() { e.done <- Main(args, p) }()
	return e
}

// stop sends sig (unless nil) and waits up to 10s for Main to return code.
func (e cliEnd) stop(t *testing.T, sig os.Signal, code int) {
	t.Helper()
	if sig != nil {
		e.sig <- sig
	}
	select {
	case got := <-e.done:
		if got != code {
			t.Errorf("exit %d, want %d; stderr: %s", got, code, e.errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Errorf("a tunnel end did not stop within 10s; stderr: %s", e.errb.String())
	}
}

// echoListener serves one read's echo per connection until the test ends.
func echoListener(t *testing.T) string {
	t.Helper()
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { echo.Close() })
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return echo.Addr().String()
}

// dialEntry connects to an entry that listens within a second or two.
func dialEntry(t *testing.T, addr string) net.Conn {
	t.Helper()
	var c net.Conn
	var err error
	for i := 0; i < 100; i++ {
		if c, err = net.Dial("tcp", addr); err == nil {
			t.Cleanup(func() { c.Close() })
			return c
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("entry never listened: %v", err)
	return nil
}

// pingEcho sends msg through the tunnel and reads it back.
func pingEcho(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != msg {
		t.Fatalf("round trip through the tunnel: %q %v", buf, err)
	}
}

// TestTunnelSIGTERMDrains: SIGTERM closes the entry's listener and lets its open
// connection run until it ends; then the command exits 0.
func TestTunnelSIGTERMDrains(t *testing.T) {
	certs := tunnelCertDir(t)
	exitAddr, entryAddr := freeAddr(t), freeAddr(t)
	exit := startCLIEnd(t, "exit", exitAddr, echoListener(t), certs)
	defer exit.stop(t, os.Interrupt, 0)
	entry := startCLIEnd(t, "entry", entryAddr, exitAddr, certs, "--drain-timeout", "20s")
	c := dialEntry(t, entryAddr)
	pingEcho(t, c, "before")
	entry.sig <- syscall.SIGTERM
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		nc, err := net.Dial("tcp", entryAddr)
		if err != nil {
			break
		}
		nc.Close()
		if time.Now().After(deadline) {
			t.Fatal("the entry still accepts 5s after SIGTERM")
		}
	}
	pingEcho(t, c, "draining")
	select {
	case code := <-entry.done:
		t.Fatalf("the entry exited (%d) with a connection open; stderr: %s", code, entry.errb.String())
	case <-time.After(200 * time.Millisecond):
	}
	c.Close()
	entry.stop(t, nil, 0)
	if msg := entry.errb.String(); !strings.Contains(msg, "SIGTERM: closed the listener; draining 1 open connection(s) for up to 20s") {
		t.Errorf("stderr: %q", msg)
	}
}

// TestTunnelSIGHUPReloads: SIGHUP makes an end read its certificate files again (here a
// new CA's): after the exit's reload an entry still on the old CA is refused, after the
// entry's a new connection goes through, and the one open across both goes on.
func TestTunnelSIGHUPReloads(t *testing.T) {
	certs := tunnelCertDir(t)
	exitAddr, entryAddr := freeAddr(t), freeAddr(t)
	exit := startCLIEnd(t, "exit", exitAddr, echoListener(t), certs, "--mux", "off")
	entry := startCLIEnd(t, "entry", entryAddr, exitAddr, certs, "--mux", "off")
	defer func() {
		for _, e := range []cliEnd{entry, exit} {
			e.stop(t, os.Interrupt, 0)
		}
	}()
	c := dialEntry(t, entryAddr)
	pingEcho(t, c, "old certificate")
	p, _, errb, _ := testProcess(t, false)
	if code := Main([]string{"tunnel", "certs", "--out", certs, "--hosts", "127.0.0.1"}, p); code != 0 {
		t.Fatalf("tunnel certs: %s", errb)
	}
	// Each end reloads in its own goroutine: wait for what the reload changes.
	waitFor := func(what string, ok func(error) bool) {
		t.Helper()
		var err error
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if err = echoNew(entryAddr, "new"); ok(err) {
				return
			}
		}
		t.Fatalf("%s: a new connection: %v", what, err)
	}
	exit.hangups <- syscall.SIGHUP
	waitFor("after the exit's SIGHUP only", func(err error) bool { return err != nil })
	entry.hangups <- syscall.SIGHUP
	waitFor("after both ends' SIGHUP", func(err error) bool { return err == nil })
	pingEcho(t, c, "open across the reloads")
	for _, e := range []cliEnd{exit, entry} {
		if s := e.errb.String(); strings.Contains(s, "SIGHUP") {
			t.Errorf("a reload failed: %s", s)
		}
	}
}

// echoNew makes a new connection to addr and echoes msg over it.
func echoNew(addr, msg string) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte(msg)); err != nil {
		return err
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil {
		return err
	}
	return nil
}

// freeAddr is a 127.0.0.1 address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// `tunnel goals --tsv` is what scripts/bench-tunnel.sh reads its thresholds from: one line
// per goal, key, comparison, threshold and unit.
func TestTunnelGoalsTSV(t *testing.T) {
	p, out, errb, _ := testProcess(t, false)
	if rc := Main([]string{"tunnel", "goals", "--tsv"}, p); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb)
	}
	want := map[string]string{"over-socat": ">=\t1.0\t×", "over-compression": ">=\t2.5\t×",
		"replication-load": ">=\t4.0\t×", "replication-wire": "<=\t0.30\t×"}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		key, rest, _ := strings.Cut(line, "\t")
		if w, ok := want[key]; ok && rest != w {
			t.Errorf("goal %s: %q, want %q", key, rest, w)
		}
		delete(want, key)
	}
	if len(want) > 0 {
		t.Errorf("goals missing from the output: %v\n%s", want, out)
	}
}

// `tunnel goals` hands its judging flags to package tunnel: a bad combination is a usage
// error (exit 2), and --summary prints the committed goals file's table.
func TestTunnelGoalsJudgeWiring(t *testing.T) {
	p, _, errb, _ := testProcess(t, false)
	if rc := Main([]string{"tunnel", "goals", "--judge", "rows.tsv"}, p); rc != 2 || !strings.Contains(errb.String(), "--out") {
		t.Errorf("--judge without --out: rc %d: %s", rc, errb)
	}
	p, _, errb, _ = testProcess(t, false)
	if rc := Main([]string{"tunnel", "goals", "--tsv", "--summary", "../../docs/bench/tunnel-goals.json"}, p); rc != 2 {
		t.Errorf("--tsv with --summary: rc %d: %s", rc, errb)
	}
	p, out, errb, _ := testProcess(t, false)
	if rc := Main([]string{"tunnel", "goals", "--summary", "../../docs/bench/tunnel-goals.json"}, p); rc != 0 ||
		!strings.HasPrefix(out.String(), "| goal | target | verdict | measured by | date |\n") {
		t.Errorf("--summary: rc %d: %s%s", rc, out, errb)
	}
}
