//go:build linux

package metrics

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/nstest"
)

func skipUnlessRoot(t *testing.T) {
	t.Helper()
	nstest.SkipUnlessRoot(t, "ip")
}

func mustIP(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// twoNamespaces builds ns "a" (the wire, where the sampler looks) and ns "b", joined by
// two veth pairs: "up" 198.18.251.0/30 and "down" 198.18.252.0/30. Both are deleted in
// t.Cleanup, which also runs when setup fails half-way.
func twoNamespaces(t *testing.T) (a, b, upIf, downIf string) {
	t.Helper()
	var r [3]byte
	if _, err := rand.Read(r[:]); err != nil {
		t.Fatal(err)
	}
	id := hex.EncodeToString(r[:])
	a, b = "wlm-"+id+"-a", "wlm-"+id+"-b"
	upIf, downIf = "wm"+id+"ua", "wm"+id+"da"
	t.Cleanup(func() {
		for _, ns := range []string{a, b} {
			exec.Command("ip", "netns", "del", ns).Run()
		}
	})
	mustIP(t, "netns", "add", a)
	mustIP(t, "netns", "add", b)
	for _, p := range []struct{ name, peer, net string }{
		{upIf, "wm" + id + "ub", "198.18.251."}, {downIf, "wm" + id + "db", "198.18.252."},
	} {
		mustIP(t, "link", "add", p.name, "netns", a, "type", "veth", "peer", "name", p.peer, "netns", b)
		mustIP(t, "-n", a, "addr", "add", p.net+"1/30", "dev", p.name)
		mustIP(t, "-n", b, "addr", "add", p.net+"2/30", "dev", p.peer)
		mustIP(t, "-n", a, "link", "set", p.name, "up")
		mustIP(t, "-n", b, "link", "set", p.peer, "up")
	}
	return a, b, upIf, downIf
}

// TestWireCountersInNetns checks the open-once approach end to end: the sampler opens
// /proc/thread-self/net/dev inside ns a, goes back to the host namespace, and re-reads that
// fd from whatever thread its goroutine lands on. The bytes TCP sends out of each veth
// must show up in the right direction.
func TestWireCountersInNetns(t *testing.T) {
	skipUnlessRoot(t)
	a, b, upIf, downIf := twoNamespaces(t)

	var ln net.Listener
	if err := withNetns(filepath.Join("/run/netns", b), func() (err error) {
		ln, err = net.Listen("tcp", "0.0.0.0:0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	received := make(chan int64, 2)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				n, _ := io.Copy(io.Discard, c)
				received <- n // buffered for both connections
			}()
		}
	}()

	s := NewSampler(Source{WireNS: a, UpIface: upIf, DownIface: downIf}, 100*time.Millisecond, nil)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()

	const upN, downN = 3 << 20, 1 << 20
	send(t, a, "198.18.251.2", port, upN)
	send(t, a, "198.18.252.2", port, downN)
	for range 2 {
		select {
		case <-received:
		case <-time.After(10 * time.Second):
			t.Fatal("server did not receive the traffic")
		}
	}
	time.Sleep(250 * time.Millisecond) // a few samples from other threads
	samples := s.Stop()
	tt := s.Totals()
	t.Logf("totals %+v over %d samples", tt, len(samples))
	if tt.UpBytes < upN || tt.UpBytes > upN+downN/2 {
		t.Errorf("up bytes %d, want >= %d and well below %d", tt.UpBytes, upN, upN+downN)
	}
	if tt.DownBytes < downN || tt.DownBytes > upN/2 {
		t.Errorf("down bytes %d, want >= %d and well below %d (directions swapped?)", tt.DownBytes, downN, upN)
	}
	if tt.UpPkts < upN/65536 || tt.DownPkts < downN/65536 {
		t.Errorf("packets up %d down %d: too few", tt.UpPkts, tt.DownPkts)
	}
	var peak float64
	for _, sm := range samples {
		peak = max(peak, sm.UpBytesPerS)
	}
	if peak <= 0 {
		t.Error("no sample saw the upload")
	}
	// The host namespace must not have been left switched: its net/dev has no such iface.
	host, err := os.ReadFile("/proc/thread-self/net/dev")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(host), upIf) {
		t.Error("test thread is still in the wire namespace")
	}
}

// send opens a TCP connection from inside ns and writes n bytes.
func send(t *testing.T, ns, host string, port, n int) {
	t.Helper()
	var c net.Conn
	if err := withNetns(filepath.Join("/run/netns", ns), func() (err error) {
		c, err = net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), 5*time.Second)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
}
