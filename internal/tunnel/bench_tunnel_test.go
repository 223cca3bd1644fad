package tunnel

import (
	"crypto/tls"
	"io"
	"net"
	"os/exec"

	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkThroughput pushes binlog-like bytes client → entry → exit → sink over loopback
// (no shaping), next to the same two hops through socat and a direct connection. "cpu-ms/MB"
// counts this process (client, relays, sink) plus socat's; subtract the direct row to get
// the relays' share.
func BenchmarkThroughput(b *testing.B) {
	data := binlogCorpus()
	cases := []string{"direct", "socat", "tunnel-off", "tunnel-zstd", "tunnel-auto"}
	for _, name := range cases {
		b.Run(name, func(b *testing.B) {
			got := make(chan int64, 1)
			sink := serveTCP(b, func(c net.Conn) { n, _ := io.Copy(io.Discard, c); got <- n })
			addr, children := sink, []*exec.Cmd(nil)
			switch {
			case name == "socat":
				mid := socat(b, sink)
				front := socat(b, mid.addr)
				addr, children = front.addr, []*exec.Cmd{mid.cmd, front.cmd}
			case strings.HasPrefix(name, "tunnel-"):
				mode := Mode(strings.TrimPrefix(name, "tunnel-"))
				entry, _ := pair(b, sink, mode, MuxOff, nil, nil)
				addr = entry.Addr().String()
			}
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			const chunk = 256 << 10
			b.SetBytes(chunk)
			cpu0 := cpuTime() + childCPU(children)
			off := 0
			start := time.Now()
			for b.Loop() {
				if off+chunk > len(data) {
					off = 0
				}
				if _, err := c.Write(data[off : off+chunk]); err != nil {
					b.Fatal(err)
				}
				off += chunk
			}
			c.(*net.TCPConn).CloseWrite()
			select {
			case n := <-got:
				if n != int64(b.N)*chunk {
					b.Fatalf("sink got %d bytes, want %d", n, int64(b.N)*chunk)
				}
			case <-time.After(30 * time.Second):
				b.Fatal("sink did not finish")
			}
			el := time.Since(start)
			cpu := cpuTime() + childCPU(children) - cpu0
			c.Close()
			mb := float64(b.N) * chunk / 1e6
			b.ReportMetric(mb/el.Seconds(), "wallMB/s")
			b.ReportMetric(float64(cpu.Milliseconds())/mb, "cpu-ms/MB")
		})
	}
}

type socatRelay struct {
	addr string
	cmd  *exec.Cmd
}

// socat starts a loopback socat relay to "to" for one connection and returns its address.
func socat(b *testing.B, to string) socatRelay { return startSocat(b, to, false) }

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// childCPU reads utime+stime of running children from /proc (clock ticks of 10ms).
func childCPU(cmds []*exec.Cmd) time.Duration {
	seen := map[int]bool{}
	var total time.Duration
	for _, c := range cmds {
		if c == nil || c.Process == nil || seen[c.Process.Pid] {
			continue
		}
		seen[c.Process.Pid] = true
		total += pidCPU(c.Process.Pid)
	}
	return total
}

// BenchmarkPingPong is the round-trip time of a 40-byte request and its echo: what an
// interactive MySQL client pays for the tunnel on loopback. "cpu-us/op" is this process's
// CPU (client, echo server and both ends) per round trip: wall time on a shared machine
// measures the neighbours too.
func BenchmarkPingPong(b *testing.B) {
	for _, name := range []string{"direct", "tunnel-off", "tunnel-zstd", "tunnel-auto", "tunnel-auto-tls"} {
		b.Run(name, func(b *testing.B) {
			addr := echoServer(b)
			if strings.HasPrefix(name, "tunnel-") {
				var entryTLS, exitTLS *tls.Config
				mode := strings.TrimPrefix(name, "tunnel-")
				if m, ok := strings.CutSuffix(mode, "-tls"); ok {
					mode = m
					entryTLS, exitTLS, _ = testCerts(b)
				}
				entry, _ := pair(b, addr, Mode(mode), MuxOff, entryTLS, exitTLS)
				addr = entry.Addr().String()
			}
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			req := query("SELECT c FROM sbtest1 WHERE id=4242")
			buf := make([]byte, len(req))
			// One round trip first: the TLS handshake is not per message.
			c.Write(req)
			if _, err := io.ReadFull(c, buf); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				c.Write(req)
				if _, err := io.ReadFull(c, buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
		})
	}
}
