package cli

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); buf := make([]byte, 64); n, _ := c.Read(buf); c.Write(buf[:n]) }()
		}
	}()
	exitAddr, entryAddr := freeAddr(t), freeAddr(t)
	type end struct {
		sig  chan os.Signal
		done chan int
		errb *lockedBuffer
	}
	start := func(role, listen, to string) end {
		p, _, _, _ := testProcess(t, false)
		e := end{sig: make(chan os.Signal, 2), done: make(chan int, 1), errb: &lockedBuffer{}}
		p.Interrupts, p.Stderr = e.sig, e.errb
		args := []string{"tunnel", role, "--listen", listen, "--to", to, "--tls-cert", filepath.Join(certs, role+".pem"),
			"--tls-key", filepath.Join(certs, role+"-key.pem"), "--tls-ca", filepath.Join(certs, "ca.pem"), "--mux", mux}
		go func() { e.done <- Main(args, p) }()
		return e
	}
	ends := []end{start("exit", exitAddr, echo.Addr().String()), start("entry", entryAddr, exitAddr)}
	defer func() {
		for _, e := range ends {
			e.sig <- os.Interrupt
			select {
			case code := <-e.done:
				if code != 0 {
					t.Errorf("exit %d; stderr: %s", code, e.errb.String())
				}
			case <-time.After(10 * time.Second):
				t.Errorf("a tunnel end did not stop within 10s")
			}
		}
	}()
	var c net.Conn
	for i := 0; i < 100; i++ { // both ends listen within a second
		if c, err = net.Dial("tcp", entryAddr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("entry never listened: %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("round trip through the tunnel: %q %v", buf, err)
	}
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
