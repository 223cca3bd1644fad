package lab

import (
	"context"
	"fmt"
	"net"
	"time"
)

// labNet is the lab's own part of 198.18.0.0/15: its hosts and the leg to this machine.
var labNet = &net.IPNet{IP: net.IPv4(198, 18, 0, 0), Mask: net.CIDRMask(22, 32)}

// OutsideAddr resolves an existing server's host (its DSN's) to the one IPv4 address the
// lab routes to (Target.Addr), refusing addresses the lab's hosts cannot reach or that
// are the lab's own.
func OutsideAddr(host string) (string, error) {
	ip := net.ParseIP(host)
	if ip == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ips, err := net.DefaultResolver.LookupIP(ctx, "ip4", host)
		if err != nil || len(ips) == 0 {
			return "", fmt.Errorf("host %q has no IPv4 address (%v); name the server by an IPv4 address or a name that has one", host, err)
		}
		ip = ips[0]
	}
	v4 := ip.To4()
	switch {
	case v4 == nil:
		return "", fmt.Errorf("%s is not IPv4; the lab is IPv4: name the server by an IPv4 address", ip)
	case v4.IsLoopback():
		return "", fmt.Errorf("%s is this machine's loopback, which the lab's hosts cannot reach; have the server listen on an address of one of this machine's interfaces (bind-address) and name that", v4)
	case v4.IsUnspecified() || v4.IsMulticast() || v4.Equal(net.IPv4bcast):
		return "", fmt.Errorf("%s is not a server's address", v4)
	case labNet.Contains(v4):
		return "", fmt.Errorf("%s is one of the lab's own addresses (%s); name the server by another", v4, labNet)
	}
	return v4.String(), nil
}
