package tunnel

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkRelay is what a relay costs per query when the link is not the bottleneck: c
// clients each run oltp_read_only's queries one after another (10 point selects and 4
// 100-row range queries per transaction, the server answering each with its result set)
// through nothing (direct), two socat hops (TCP-LISTEN,fork,nodelay → TCP,nodelay, as the
// transport study runs them) or a tunnel entry+exit with mutual TLS: one WAN connection per
// client (tunnel) or one mux link (mux), inside this process or, with -proc, as two
// `wirelab tunnel` processes (the lab's layout: their CPU is their own; -p1 with
// GOMAXPROCS=1, -goroutines without the relay loop, -1link with the entry's --links 1). "cpu-us/op" is
// this process plus every relay process per query; subtract the direct row for the relay's
// share. ns/op is wall time per query of all clients together.
func BenchmarkRelay(b *testing.B) {
	for _, clients := range []int{1, 2, 32} {
		for _, name := range []string{"direct", "socat", "tunnel", "mux", "tunnel-proc", "mux-proc", "tunnel-proc-p1", "mux-proc-p1", "mux-proc-goroutines", "mux-proc-1link"} {
			b.Run(fmt.Sprintf("%s/c=%d", name, clients), func(b *testing.B) { benchRelay(b, name, clients) })
		}
	}
}

func benchRelay(b *testing.B, name string, clients int) {
	r := rand.New(rand.NewPCG(1, 1))
	reqs, resps := readOnlyTraffic(r, newTable(r, 10000), 50)
	// A request is 4 bytes: the index of the response the server sends back.
	addr := serveTCP(b, func(c net.Conn) {
		var in [4]byte
		for {
			if _, err := io.ReadFull(c, in[:]); err != nil {
				return
			}
			if _, err := c.Write(resps[binary.BigEndian.Uint32(in[:])%uint32(len(resps))]); err != nil {
				return
			}
		}
	})
	var relays []*exec.Cmd
	switch name {
	case "socat":
		mid := socatFork(b, addr)
		front := socatFork(b, mid.addr)
		addr, relays = front.addr, []*exec.Cmd{mid.cmd, front.cmd}
	case "tunnel", "mux":
		entryTLS, exitTLS, _ := testCerts(b)
		mux := map[string]MuxMode{"tunnel": MuxOff, "mux": MuxOn}[name]
		entry, _ := pair(b, addr, Auto, mux, entryTLS, exitTLS)
		addr = entry.Addr().String()
	case "tunnel-proc", "mux-proc", "tunnel-proc-p1", "mux-proc-p1", "mux-proc-goroutines", "mux-proc-1link":
		var env, entryArgs []string
		if name == "mux-proc-1link" {
			entryArgs = []string{"--links", "1"}
		}
		if strings.HasSuffix(name, "-p1") {
			env = []string{"GOMAXPROCS=1"}
		}
		if strings.HasSuffix(name, "-goroutines") {
			env = []string{"WIRELAB_TUNNEL_LOOP=off"} // the mux link without its relay loop
		}
		addr, relays = tunnelProcs(b, addr, map[bool]string{false: "off", true: "on"}[strings.HasPrefix(name, "mux")], entryArgs, env...)
	}
	conns := make([]net.Conn, clients)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		if err := query1(c, 0, len(resps[0])); err != nil { // connect every hop first
			b.Fatal(err)
		}
		conns[i] = c
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, clients)
	cpu0 := cpuTime() + treeCPU(relays)
	start := time.Now()
	b.ResetTimer()
	for _, c := range conns {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				k := int(i) % len(reqs)
				if err := query1(c, k, len(resps[k])); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	el := time.Since(start)
	cpu := cpuTime() + treeCPU(relays) - cpu0
	close(errc)
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/op")
	b.ReportMetric(float64(b.N)/el.Seconds(), "q/s")
}

// query1 asks for response k and reads its n bytes.
func query1(c net.Conn, k, n int) error {
	var req [4]byte
	binary.BigEndian.PutUint32(req[:], uint32(k))
	if _, err := c.Write(req[:]); err != nil {
		return err
	}
	buf := make([]byte, n)
	_, err := io.ReadFull(c, buf)
	return err
}

var (
	wirelabOnce sync.Once
	wirelabBin  string
	wirelabErr  error
)

// TestMain removes the wirelab binary a benchmark built, once every test and benchmark
// of the package has run.
func TestMain(m *testing.M) {
	code := m.Run()
	if wirelabBin != "" {
		os.RemoveAll(filepath.Dir(wirelabBin))
	}
	os.Exit(code)
}

// tunnelProcs builds bin/wirelab once and runs an exit (to server) and an entry with
// mutual TLS as processes; it returns the entry's address.
func tunnelProcs(b *testing.B, server, mux string, entryArgs []string, env ...string) (string, []*exec.Cmd) {
	b.Helper()
	wirelabOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wirelab-bench")
		if err != nil {
			wirelabErr = err
			return
		}
		wirelabBin = dir + "/wirelab"
		out, err := exec.Command("go", "build", "-o", wirelabBin, "../../cmd/wirelab").CombinedOutput()
		if err != nil {
			wirelabErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if wirelabErr != nil {
		b.Skip(wirelabErr)
	}
	_, _, certs := testCerts(b)
	exitAddr, entryAddr := freePort(b), freePort(b)
	start := func(role, listen, to string) *exec.Cmd {
		args := []string{"tunnel", role, "--listen", listen, "--to", to, "--mux", mux,
			"--tls-cert", certs + "/" + role + ".pem", "--tls-key", certs + "/" + role + "-key.pem", "--tls-ca", certs + "/ca.pem"}
		if role == "entry" {
			args = append(args, entryArgs...)
		}
		cmd := exec.Command(wirelabBin, args...)
		cmd.Env = append(os.Environ(), env...)
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	cmds := []*exec.Cmd{start("exit", exitAddr, server), start("entry", entryAddr, exitAddr)}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", entryAddr); err == nil {
			c.Close()
			return entryAddr, cmds
		}
	}
	b.Fatal("wirelab tunnel entry did not listen")
	return "", nil
}

// freePort is a 127.0.0.1 address no one listens on now.
func freePort(b testing.TB) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// socatFork starts a socat relay to "to" that forks per connection, with TCP_NODELAY on
// both sides, as the transport study runs it.
func socatFork(b *testing.B, to string) socatRelay { return startSocat(b, to, true) }

// startSocat starts a loopback socat relay to "to" and returns its address: for one
// connection, or (fork) a child per connection with TCP_NODELAY on both sides.
func startSocat(b *testing.B, to string, fork bool) socatRelay {
	b.Helper()
	path, err := exec.LookPath("socat")
	if err != nil {
		b.Skip("socat not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	listen, dial := fmt.Sprintf("TCP-LISTEN:%d,bind=127.0.0.1,reuseaddr", port), "TCP:"+to
	if fork {
		listen, dial = listen+",fork,nodelay,backlog=128", dial+",nodelay"
	}
	cmd := exec.Command(path, listen, dial)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		for _, pid := range descendants(cmd.Process.Pid) {
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if fork {
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close() // a probe costs one short-lived child
				return socatRelay{addr: addr, cmd: cmd}
			}
			continue
		}
		// Without fork socat accepts one connection only, so probe the port without connecting.
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return socatRelay{addr: addr, cmd: cmd}
		}
		l.Close()
	}
	b.Fatal("socat did not listen")
	return socatRelay{}
}

// treeCPU is utime+stime of the commands and their forked children (clock ticks of 10ms).
func treeCPU(cmds []*exec.Cmd) time.Duration {
	var total time.Duration
	for _, c := range cmds {
		if c == nil || c.Process == nil {
			continue
		}
		for _, pid := range append(descendants(c.Process.Pid), c.Process.Pid) {
			total += pidCPU(pid)
		}
	}
	return total
}

func pidCPU(pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// descendants lists the processes whose parent is pid (socat's forked children).
func descendants(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
		if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
			out = append(out, child)
		}
	}
	return out
}
