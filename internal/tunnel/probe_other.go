//go:build !linux

package tunnel

import (
	"net"
	"time"
)

// wanProbe is Linux-only (TCP_INFO); elsewhere auto relies on blocked writes alone.
type wanProbe struct{}

func newWANProbe(net.Conn, int) *wanProbe { return nil }

func (p *wanProbe) sample() (queueSample, bool) { return queueSample{}, false }

var cpuStart = time.Now()

// threadCPU stands in for the thread's CPU time where it is not read: wall time.
func threadCPU() time.Duration { return time.Since(cpuStart) }
