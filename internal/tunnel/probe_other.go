//go:build !linux

package tunnel

import "net"

// wanProbe is Linux-only (TCP_INFO); elsewhere auto relies on blocked writes alone.
type wanProbe struct{}

func newWANProbe(net.Conn, int) *wanProbe { return nil }

func (p *wanProbe) sample() (queueSample, bool) { return queueSample{}, false }
