package link

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// NetnsProber measures from inside the lab's namespaces without helper processes: sockets
// are created on a thread that entered the namespace, and a socket stays in the namespace it
// was created in whatever thread uses it afterwards.
type NetnsProber struct {
	NetnsDir string // default /run/netns
}

// inNetns runs fn on a fresh OS thread that has entered namespace ns. The thread is never
// unlocked, so the runtime discards it when fn returns instead of reusing it elsewhere.
func (p NetnsProber) inNetns(ns string, fn func() error) error {
	dir := p.NetnsDir
	if dir == "" {
		dir = "/run/netns"
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		f, err := os.Open(dir + "/" + ns)
		if err != nil {
			errc <- fmt.Errorf("open namespace %s: %w", ns, err)
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("enter namespace %s: %w", ns, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// Dial opens a connection from inside namespace ns (a lab host): the socket stays there, so
// what goes over it takes that host's routes, across the wire.
func (p NetnsProber) Dial(ctx context.Context, ns, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := p.inNetns(ns, func() (err error) {
		c, err = (&net.Dialer{}).DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// RTT implements Prober: one TCP connection (Nagle off), 8-byte echoes one after another.
func (p NetnsProber) RTT(ctx context.Context, h CheckHosts, n int, budget time.Duration) ([]time.Duration, error) {
	var ln net.Listener
	if err := p.inNetns(h.ServerNS, func() (err error) {
		ln, err = net.Listen("tcp", net.JoinHostPort(h.ServerAddr, "0"))
		return err
	}); err != nil {
		return nil, err
	}
	defer ln.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.Copy(c, c)
	}()
	var conn net.Conn
	if err := p.inNetns(h.ClientNS, func() (err error) {
		conn, err = (&net.Dialer{Timeout: 15 * time.Second}).DialContext(ctx, "tcp", ln.Addr().String())
		return err
	}); err != nil {
		return nil, fmt.Errorf("connect to echo server: %w", err)
	}
	defer conn.Close()
	stop := time.Now().Add(budget)
	out := make([]time.Duration, 0, n)
	var buf [8]byte
	for i := 0; i < n && ctx.Err() == nil && (i < 5 || time.Now().Before(stop)); i++ {
		binary.BigEndian.PutUint64(buf[:], uint64(i))
		_ = conn.SetDeadline(time.Now().Add(15 * time.Second))
		t := time.Now()
		if _, err := conn.Write(buf[:]); err != nil {
			return out, fmt.Errorf("echo %d: %w", i, err)
		}
		if _, err := io.ReadFull(conn, buf[:]); err != nil {
			return out, fmt.Errorf("echo %d: %w", i, err)
		}
		out = append(out, time.Since(t))
	}
	return out, nil
}

// Loss implements Prober: n numbered UDP datagrams to an echo socket in the server namespace.
func (p NetnsProber) Loss(ctx context.Context, h CheckHosts, n int, gap, wait time.Duration) (int, int, error) {
	var srv net.PacketConn
	if err := p.inNetns(h.ServerNS, func() (err error) {
		srv, err = net.ListenPacket("udp", net.JoinHostPort(h.ServerAddr, "0"))
		return err
	}); err != nil {
		return 0, 0, err
	}
	defer srv.Close()
	go func() {
		buf := make([]byte, 64)
		for {
			k, addr, err := srv.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = srv.WriteTo(buf[:k], addr)
		}
	}()
	var cl *net.UDPConn
	if err := p.inNetns(h.ClientNS, func() error {
		c, err := net.Dial("udp", srv.LocalAddr().String())
		if err == nil {
			cl = c.(*net.UDPConn)
		}
		return err
	}); err != nil {
		return 0, 0, err
	}
	defer cl.Close()
	seen := make([]bool, n)
	var back int
	var mu sync.Mutex
	rdone := make(chan struct{})
	go func() {
		defer close(rdone)
		buf := make([]byte, 64)
		for {
			k, err := cl.Read(buf)
			if err != nil {
				return
			}
			if k >= 8 {
				if i := binary.BigEndian.Uint64(buf); i < uint64(n) {
					mu.Lock()
					if !seen[i] {
						seen[i], back = true, back+1
					}
					mu.Unlock()
				}
			}
		}
	}()
	payload := make([]byte, 64)
	sent := 0
	next := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		binary.BigEndian.PutUint64(payload, uint64(i))
		if _, err := cl.Write(payload); err != nil && !errors.Is(err, unix.ECONNREFUSED) {
			return sent, back, fmt.Errorf("send datagram %d: %w", i, err)
		}
		sent++
		next = next.Add(gap)
		time.Sleep(time.Until(next))
	}
	time.Sleep(wait)
	_ = cl.SetReadDeadline(time.Now())
	<-rdone
	mu.Lock()
	defer mu.Unlock()
	return sent, back, nil
}
