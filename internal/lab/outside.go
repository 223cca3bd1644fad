package lab

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/execx"
)

// The lab's way out to an existing server (one wirelab did not start): the server host,
// which then runs no database, routes to it through a veth leg into this machine's own
// namespace. The client's traffic still crosses the shaped wire to the server host, so the
// wire, its shaping, its byte counters and `link check` mean what they mean with a lab
// server; the server host only forwards.
const (
	OutsideIface    = "ext0"       // the leg's end in the server host
	OutsideHostAddr = "198.18.3.1" // the server host's end of the leg (198.18.3.0/30)
	OutsideRootAddr = "198.18.3.2" // this machine's end of the leg
)

// LegName is the leg's end in this machine's namespace, named after the lab so that
// `ip link` says whose it is (at most 15 characters, as interface names must be).
func LegName(id string) string { return "wl-" + id + "-x" }

// Target is an address outside the lab that the server host routes to.
type Target struct {
	Addr string // an IPv4 address, outside the lab's own 198.18.0.0/22
	Port int
}

// Outside is what the lab made and changed in this machine's own namespace to reach an
// existing server, saved before each change so that Down undoes exactly that, also after
// a kill -9. The leg and the route back through it go with the server host's namespace
// (deleting one end of a veth deletes both); a sysctl and iptables rules do not, so they
// are recorded.
type Outside struct {
	Addr string `json:"addr"`
	Port int    `json:"port"`
	Leg  string `json:"leg"`
	// Local: Addr is this machine's own address, so the machine delivers to it and
	// forwards nothing. Otherwise Via is the machine's interface toward Addr.
	Local bool   `json:"local"`
	Via   string `json:"via,omitempty"`
	// ForwardingWas is net.ipv4.conf.<Via>.forwarding before the lab set it to 1; "" when
	// the lab left it alone. Down puts it back if it is still 1.
	ForwardingWas string `json:"forwarding_was,omitempty"`
	// Rules are the iptables rules the lab added to this machine's tables, each tagged with
	// the comment RuleComment(id); Down deletes them.
	Rules []Rule `json:"rules,omitempty"`
}

// Rule is one iptables rule: `iptables -t Table -I Chain 1 Spec...` adds it, -D deletes it.
type Rule struct {
	Table string   `json:"table"`
	Chain string   `json:"chain"`
	Spec  []string `json:"spec"`
}

// RuleComment tags the iptables rules of lab id, so that a person reading `iptables -S`,
// and `wirelab down --all` for a lab whose state file is gone, know whose they are.
func RuleComment(id string) string { return "wirelab lab " + id }

// reachOutside builds the leg from the server host to this machine and the routes to t
// and back; when t is another machine's, this machine forwards for the lab's client alone
// (one interface's forwarding, a MASQUERADE rule for the client's address to t's). Rules
// that let the traffic through are added only to chains that are not empty and accepting.
func (l *Lab) reachOutside(ctx context.Context, t Target) error {
	st, r := l.State, l.runner
	if dev := addrOwner(ctx, r, OutsideRootAddr); dev != "" {
		return fmt.Errorf("reach %s: %s is already on %s: another lab reaches an existing server; `wirelab down` it first", t.Addr, OutsideRootAddr, dev)
	}
	out, err := r.Run(ctx, "ip", "-4", "-o", "route", "get", t.Addr)
	if err != nil {
		return fmt.Errorf("reach %s: this machine has no route to it: %w", t.Addr, err)
	}
	local, via, err := parseRouteGet(string(out))
	if err != nil {
		return fmt.Errorf("reach %s: %w", t.Addr, err)
	}
	o := &Outside{Addr: t.Addr, Port: t.Port, Leg: LegName(st.RunID), Local: local, Via: via}
	st.Outside = o
	if err := st.Save(); err != nil {
		return err
	}
	srv, wire, client := st.NS(Server), st.NS(Wire), HostAddr[Client]
	steps := [][]string{
		{"ip", "link", "add", o.Leg, "type", "veth", "peer", "name", OutsideIface, "netns", srv},
		{"ip", "addr", "add", OutsideRootAddr + "/30", "dev", o.Leg},
		{"ip", "link", "set", o.Leg, "up"},
		{"ip", "-n", srv, "addr", "add", OutsideHostAddr + "/30", "dev", OutsideIface},
		{"ip", "-n", srv, "link", "set", OutsideIface, "up"},
		{"ip", "-n", srv, "route", "add", t.Addr + "/32", "via", OutsideRootAddr},
		{"ip", "-n", wire, "route", "add", t.Addr + "/32", "via", HostAddr[Server]},
		// The server sees the client's own address; its replies go back through the leg.
		{"ip", "route", "add", client + "/32", "via", OutsideHostAddr, "dev", o.Leg},
	}
	for _, s := range steps {
		if _, err := r.Run(ctx, s[0], s[1:]...); err != nil {
			return fmt.Errorf("reach %s: %w", t.Addr, err)
		}
	}
	if err := l.sysctl(ctx, srv, "net.ipv4.ip_forward=1"); err != nil {
		return err
	}
	if local {
		return l.letThrough(ctx, []Rule{
			{"filter", "INPUT", []string{"-i", o.Leg, "-s", client + "/32", "-d", t.Addr + "/32", "-p", "tcp", "--dport", strconv.Itoa(t.Port)}},
			{"filter", "OUTPUT", []string{"-o", o.Leg, "-s", t.Addr + "/32", "-d", client + "/32", "-p", "tcp", "--sport", strconv.Itoa(t.Port)}},
		}, "ACCEPT")
	}
	return l.forwardOut(ctx, o)
}

// forwardOut makes this machine forward between the leg and Via for the lab's client and
// the server alone, and masquerade the client (the server's network has no route to the
// lab's addresses).
func (l *Lab) forwardOut(ctx context.Context, o *Outside) error {
	st, r := l.State, l.runner
	key := "net.ipv4.conf." + o.Via + ".forwarding"
	cur, err := r.Run(ctx, "sysctl", "-n", key)
	if err != nil {
		return fmt.Errorf("reach %s: read %s: %w", o.Addr, key, err)
	}
	if v := strings.TrimSpace(string(cur)); v != "1" {
		o.ForwardingWas = v
		if err := st.Save(); err != nil {
			return err
		}
		if _, err := r.Run(ctx, "sysctl", "-q", "-w", key+"=1"); err != nil {
			return fmt.Errorf("reach %s: %w", o.Addr, err)
		}
	}
	// The leg is the lab's: its setting goes with it.
	if _, err := r.Run(ctx, "sysctl", "-q", "-w", "net.ipv4.conf."+o.Leg+".forwarding=1"); err != nil {
		return fmt.Errorf("reach %s: %w", o.Addr, err)
	}
	client, server := HostAddr[Client]+"/32", o.Addr+"/32"
	if err := l.addRule(ctx, Rule{"nat", "POSTROUTING", []string{"-s", client, "-d", server, "-o", o.Via}}, "MASQUERADE"); err != nil {
		return err
	}
	return l.letThrough(ctx, []Rule{
		{"filter", "FORWARD", []string{"-i", o.Leg, "-o", o.Via, "-s", client, "-d", server}},
		{"filter", "FORWARD", []string{"-i", o.Via, "-o", o.Leg, "-s", server, "-d", client}},
	}, "ACCEPT")
}

// letThrough adds each rule whose chain holds rules or drops by default: into an empty
// accepting chain a rule would change nothing, so none is added.
func (l *Lab) letThrough(ctx context.Context, rules []Rule, target string) error {
	for _, ru := range rules {
		out, err := l.runner.Run(ctx, "iptables", "-t", ru.Table, "-S", ru.Chain)
		if err != nil || openChain(string(out), ru.Chain) {
			continue // no iptables: nothing of it to let the traffic through
		}
		if err := l.addRule(ctx, ru, target); err != nil {
			return err
		}
	}
	return nil
}

// addRule tags ru with the lab's comment and target, records it, then inserts it first in
// its chain.
func (l *Lab) addRule(ctx context.Context, ru Rule, target string) error {
	ru.Spec = append(ru.Spec, "-m", "comment", "--comment", RuleComment(l.State.RunID), "-j", target)
	o := l.State.Outside
	o.Rules = append(o.Rules, ru)
	if err := l.State.Save(); err != nil {
		return err
	}
	args := append([]string{"-t", ru.Table, "-I", ru.Chain, "1"}, ru.Spec...)
	if _, err := l.runner.Run(ctx, "iptables", args...); err != nil {
		return fmt.Errorf("reach %s: add an iptables rule: %w", o.Addr, err)
	}
	return nil
}

// openChain reports whether `iptables -S chain` shows an empty chain that accepts.
func openChain(out, chain string) bool {
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.TrimSpace(line) != "-P "+chain+" ACCEPT" {
			return false
		}
	}
	return true
}

// parseRouteGet reads `ip -4 -o route get ADDR`: "local ADDR dev lo ..." for one of this
// machine's addresses, "ADDR via GW dev IFACE ..." or "ADDR dev IFACE ..." otherwise.
func parseRouteGet(out string) (local bool, dev string, err error) {
	f := strings.Fields(out)
	if len(f) == 0 {
		return false, "", errors.New("`ip route get` said nothing")
	}
	switch f[0] {
	case "local":
		return true, "", nil
	case "unreachable", "blackhole", "prohibit", "throw":
		return false, "", fmt.Errorf("this machine's route to it is %s", f[0])
	}
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "dev" {
			if f[i+1] == "lo" {
				return true, "", nil
			}
			return false, f[i+1], nil
		}
	}
	return false, "", fmt.Errorf("no interface in `ip route get`: %q", strings.TrimSpace(out))
}

// addrOwner is the interface of this machine's namespace that has addr, "" if none.
func addrOwner(ctx context.Context, r execx.Runner, addr string) string {
	out, err := r.Run(ctx, "ip", "-4", "-o", "addr", "show")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && strings.Split(f[3], "/")[0] == addr {
			return f[1]
		}
	}
	return ""
}

// undoOutside deletes the lab's iptables rules, puts the forwarding sysctl back while it is
// still the lab's 1, and deletes the leg if its namespace's deletion left it. Idempotent.
func undoOutside(ctx context.Context, r execx.Runner, o *Outside) []error {
	if o == nil {
		return nil
	}
	var errs []error
	for i := len(o.Rules) - 1; i >= 0; i-- {
		ru := o.Rules[i]
		if _, err := r.Run(ctx, "iptables", append([]string{"-t", ru.Table, "-C", ru.Chain}, ru.Spec...)...); err != nil {
			continue // not there (never added, or deleted already)
		}
		if _, err := r.Run(ctx, "iptables", append([]string{"-t", ru.Table, "-D", ru.Chain}, ru.Spec...)...); err != nil {
			errs = append(errs, fmt.Errorf("delete the lab's iptables rule: %w", err))
		}
	}
	if o.ForwardingWas != "" && o.Via != "" {
		key := "net.ipv4.conf." + o.Via + ".forwarding"
		// Gone with its interface, or changed since by someone else: not ours to set.
		if cur, err := r.Run(ctx, "sysctl", "-n", key); err == nil && strings.TrimSpace(string(cur)) == "1" {
			if _, err := r.Run(ctx, "sysctl", "-q", "-w", key+"="+o.ForwardingWas); err != nil {
				errs = append(errs, fmt.Errorf("restore %s: %w", key, err))
			}
		}
	}
	if o.Leg != "" {
		if _, err := r.Run(ctx, "ip", "link", "show", "dev", o.Leg); err == nil {
			if _, err := r.Run(ctx, "ip", "link", "del", o.Leg); err != nil {
				// The kernel also removes the leg when its peer's namespace goes, after that
				// namespace's deletion returns: gone between the look and the delete is done.
				if _, still := r.Run(ctx, "ip", "link", "show", "dev", o.Leg); still == nil {
					errs = append(errs, fmt.Errorf("delete the leg %s: %w", o.Leg, err))
				}
			}
		}
	}
	return errs
}

// orphanRules finds the iptables rules tagged by labs that have no state file in known (a
// lab whose state was removed by hand), by lab id, so `down --all` deletes them too.
func orphanRules(ctx context.Context, r execx.Runner, known map[string]bool) map[string][]Rule {
	out := map[string][]Rule{}
	for _, table := range []string{"filter", "nat"} {
		b, err := r.Run(ctx, "iptables", "-t", table, "-S")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := splitQuoted(line)
			if len(f) < 3 || f[0] != "-A" {
				continue
			}
			for i := 2; i+1 < len(f); i++ {
				id, ok := strings.CutPrefix(f[i+1], RuleComment(""))
				if f[i] == "--comment" && ok && !known[id] {
					out[id] = append(out[id], Rule{Table: table, Chain: f[1], Spec: f[2:]})
				}
			}
		}
	}
	return out
}

// splitQuoted splits an `iptables -S` line into words; a double-quoted word (a comment)
// keeps its spaces.
func splitQuoted(line string) []string {
	var words []string
	var cur strings.Builder
	quoted, inWord := false, false
	for _, c := range line {
		switch {
		case c == '"':
			quoted, inWord = !quoted, true
		case c == ' ' && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
			}
			inWord = false
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
