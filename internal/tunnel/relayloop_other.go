//go:build !linux

package tunnel

import (
	"net"
	"syscall"
)

// The relay loop is Linux-only (epoll); elsewhere a mux link runs on goroutines.

type sockConn struct{ net.Conn }

func wrapSock(c net.Conn) net.Conn { return c }
func (c *sockConn) detach() error  { return nil }
func (c *sockConn) detached() bool { return false }

func writeNow(syscall.RawConn, []byte) (int, bool) { return 0, false }

type relayLoop struct{}

func newRelayLoop(*muxLink, net.Conn) *relayLoop  { return nil }
func (l *relayLoop) run() error                   { return nil }
func (l *relayLoop) wake()                        {}
func (l *relayLoop) backlogged() bool             { return false }
func (l *relayLoop) inRound() bool                { return false }
func (l *relayLoop) add(*stream, *sockConn) error { return nil }
func (l *relayLoop) pause(*stream)                {}
func (l *relayLoop) resume(*stream)               {}
func (l *relayLoop) remove(*stream)               {}

const loopFrames = 16

var allowedCPUs = func() []int { return nil }
