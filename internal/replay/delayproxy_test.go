package replay

import (
	"net"
	"strconv"
	"testing"
	"time"
)

// delayProxy listens on a loopback port and relays each connection to network/addr,
// holding every chunk oneWay in each direction: a round trip of 2 × oneWay for every turn
// of the conversation. TCP's own handshake with the proxy is not delayed (the kernel
// completes it); the proxy dials the server oneWay after it, so a server that speaks
// first is heard a round trip after the connect, as across a real wire.
func delayProxy(t *testing.T, network, addr string, oneWay time.Duration) int {
	t.Helper()
	a := serveLoopback(t, func(c net.Conn) {
		time.Sleep(oneWay)
		s, err := net.Dial(network, addr)
		if err != nil {
			c.Close()
			return
		}
		go delayCopy(s, c, oneWay)
		delayCopy(c, s, oneWay)
	})
	_, port, _ := net.SplitHostPort(a)
	n, _ := strconv.Atoi(port)
	return n
}

// delayCopy copies src to dst, each chunk oneWay after it was read, in order; at the end
// it closes both.
func delayCopy(dst, src net.Conn, oneWay time.Duration) {
	type chunk struct {
		b  []byte
		at time.Time
	}
	line := make(chan chunk, 4096)
	go func() {
		defer close(line)
		for {
			b := make([]byte, 64<<10)
			n, err := src.Read(b)
			if n > 0 {
				line <- chunk{b[:n], time.Now().Add(oneWay)}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range line {
		time.Sleep(time.Until(c.at))
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
}
