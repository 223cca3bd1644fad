package lab

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/execx"
)

func outsideLab(t *testing.T, f *execx.Fake) *Lab {
	t.Helper()
	st := &State{RunID: "abc123", Hosts: []string{Wire, Client, Server},
		Namespaces: map[string]string{Wire: "wl-abc123-wire", Client: "wl-abc123-client", Server: "wl-abc123-server"},
		Path:       filepath.Join(t.TempDir(), "abc123.json")}
	return &Lab{State: st, runner: f, log: discard()}
}

// A server on this machine: a leg, routes there and back, nothing else on the machine
// when its firewall is open.
func TestReachOutsideLocalChangesOnlyTheLeg(t *testing.T) {
	f := &execx.Fake{Responses: map[string]string{
		"ip -4 -o route get 198.18.250.1": "local 198.18.250.1 dev lo table local src 198.18.250.1 uid 0 \\    cache <local> \n",
		"ip -4 -o addr show":              "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever\n",
		"iptables -t filter -S INPUT":     "-P INPUT ACCEPT\n",
		"iptables -t filter -S OUTPUT":    "-P OUTPUT ACCEPT\n",
	}}
	l := outsideLab(t, f)
	if err := l.reachOutside(context.Background(), Target{Addr: "198.18.250.1", Port: 3307}); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(f.Lines(), "\n")
	for _, want := range []string{
		"ip link add wl-abc123-x type veth peer name ext0 netns wl-abc123-server",
		"ip addr add 198.18.3.2/30 dev wl-abc123-x",
		"ip -n wl-abc123-server addr add 198.18.3.1/30 dev ext0",
		"ip -n wl-abc123-server route add 198.18.250.1/32 via 198.18.3.2",
		"ip -n wl-abc123-wire route add 198.18.250.1/32 via 198.18.0.2",
		"ip route add 198.18.1.2/32 via 198.18.3.1 dev wl-abc123-x",
		"ip netns exec wl-abc123-server sysctl -q -w net.ipv4.ip_forward=1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	for _, never := range []string{"iptables -t filter -I", "iptables -t nat", "sysctl -q -w net.ipv4.conf"} {
		if strings.Contains(got, never) {
			t.Errorf("a local server with an open firewall changed %q:\n%s", never, got)
		}
	}
	saved, err := Load(filepath.Dir(l.State.Path), "abc123")
	if err != nil || saved.Outside == nil || !saved.Outside.Local || saved.Outside.Leg != "wl-abc123-x" {
		t.Fatalf("saved outside %+v (%v)", saved.Outside, err)
	}
}

// A closed INPUT chain gets one tagged rule for the lab's client to the server's port.
func TestReachOutsideLocalThroughAClosedFirewall(t *testing.T) {
	f := &execx.Fake{Responses: map[string]string{
		"ip -4 -o route get":           "local 198.18.250.1 dev lo table local\n",
		"iptables -t filter -S INPUT":  "-P INPUT DROP\n-A INPUT -i lo -j ACCEPT\n",
		"iptables -t filter -S OUTPUT": "-P OUTPUT ACCEPT\n",
	}}
	l := outsideLab(t, f)
	if err := l.reachOutside(context.Background(), Target{Addr: "198.18.250.1", Port: 3307}); err != nil {
		t.Fatal(err)
	}
	want := `iptables -t filter -I INPUT 1 -i wl-abc123-x -s 198.18.1.2/32 -d 198.18.250.1/32 -p tcp --dport 3307 -m comment --comment wirelab lab abc123 -j ACCEPT`
	if !slices.Contains(f.Lines(), want) {
		t.Errorf("missing %q in:\n%s", want, strings.Join(f.Lines(), "\n"))
	}
	if n := len(l.State.Outside.Rules); n != 1 {
		t.Errorf("%d rules recorded, want 1 (OUTPUT is open)", n)
	}
}

// Another machine's server: this machine forwards for the client alone and masquerades it;
// the forwarding it changed and the rules it added are recorded before they are made.
func TestReachOutsideRemoteForwardsAndRecords(t *testing.T) {
	f := &execx.Fake{Responses: map[string]string{
		"ip -4 -o route get":                      "10.1.2.3 via 10.0.0.1 dev eth0 src 10.0.0.9 uid 0 \\    cache \n",
		"sysctl -n net.ipv4.conf.eth0.forwarding": "0\n",
		"iptables -t filter -S FORWARD":           "-P FORWARD DROP\n",
	}}
	l := outsideLab(t, f)
	if err := l.reachOutside(context.Background(), Target{Addr: "10.1.2.3", Port: 3306}); err != nil {
		t.Fatal(err)
	}
	got := f.Lines()
	for _, want := range []string{
		"sysctl -q -w net.ipv4.conf.eth0.forwarding=1",
		"sysctl -q -w net.ipv4.conf.wl-abc123-x.forwarding=1",
		"iptables -t nat -I POSTROUTING 1 -s 198.18.1.2/32 -d 10.1.2.3/32 -o eth0 -m comment --comment wirelab lab abc123 -j MASQUERADE",
		"iptables -t filter -I FORWARD 1 -i wl-abc123-x -o eth0 -s 198.18.1.2/32 -d 10.1.2.3/32 -m comment --comment wirelab lab abc123 -j ACCEPT",
		"iptables -t filter -I FORWARD 1 -i eth0 -o wl-abc123-x -s 10.1.2.3/32 -d 198.18.1.2/32 -m comment --comment wirelab lab abc123 -j ACCEPT",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, strings.Join(got, "\n"))
		}
	}
	saved, err := Load(filepath.Dir(l.State.Path), "abc123")
	if err != nil {
		t.Fatal(err)
	}
	o := saved.Outside
	if o.Local || o.Via != "eth0" || o.ForwardingWas != "0" || len(o.Rules) != 3 {
		t.Fatalf("saved outside %+v", o)
	}

	// Down deletes what is still there and puts the sysctl back.
	d := &execx.Fake{Responses: map[string]string{"sysctl -n net.ipv4.conf.eth0.forwarding": "1\n"},
		Errors: map[string]error{"ip link show": errors.New("does not exist")}}
	if errs := undoOutside(context.Background(), d, o); len(errs) > 0 {
		t.Fatal(errs)
	}
	undo := d.Lines()
	for _, want := range []string{
		"iptables -t nat -D POSTROUTING -s 198.18.1.2/32 -d 10.1.2.3/32 -o eth0 -m comment --comment wirelab lab abc123 -j MASQUERADE",
		"sysctl -q -w net.ipv4.conf.eth0.forwarding=0",
	} {
		if !slices.Contains(undo, want) {
			t.Errorf("undo lacks %q:\n%s", want, strings.Join(undo, "\n"))
		}
	}
	if slices.Contains(undo, "ip link del wl-abc123-x") {
		t.Errorf("deleted a leg that is gone:\n%s", strings.Join(undo, "\n"))
	}

	// A leg that is still there after a failed delete is reported.
	leg := &execx.Fake{Errors: map[string]error{"ip link del": errors.New("busy")}}
	if errs := undoOutside(context.Background(), leg, o); len(errs) != 1 || !strings.Contains(errs[0].Error(), "delete the leg wl-abc123-x") {
		t.Errorf("a leg that failed to go: %v, want one error naming it", errs)
	}
}

// Twice, or after someone else changed things: nothing to delete, a sysctl no longer the
// lab's 1 is left as it is.
func TestUndoOutsideIsIdempotent(t *testing.T) {
	o := &Outside{Leg: "wl-abc123-x", Via: "eth0", ForwardingWas: "0",
		Rules: []Rule{{"nat", "POSTROUTING", []string{"-j", "MASQUERADE"}}}}
	f := &execx.Fake{Responses: map[string]string{"sysctl -n": "0\n"},
		Errors: map[string]error{"iptables -t nat -C": errors.New("no such rule"), "ip link show": errors.New("no such device")}}
	if errs := undoOutside(context.Background(), f, o); len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, l := range f.Lines() {
		if strings.Contains(l, " -D ") || strings.Contains(l, "sysctl -q -w") || strings.Contains(l, "link del") {
			t.Errorf("changed something on a second undo: %s", l)
		}
	}
}

func TestReachOutsideRefusesASecondLeg(t *testing.T) {
	f := &execx.Fake{Responses: map[string]string{
		"ip -4 -o addr show": "7: wl-zzz999-x    inet 198.18.3.2/30 scope global wl-zzz999-x\\       valid_lft forever\n",
	}}
	err := outsideLab(t, f).reachOutside(context.Background(), Target{Addr: "198.18.250.1", Port: 3306})
	if err == nil || !strings.Contains(err.Error(), "wl-zzz999-x") || !strings.Contains(err.Error(), "wirelab down") {
		t.Fatalf("err %v", err)
	}
	if len(f.Calls) != 1 {
		t.Errorf("changed something: %v", f.Lines())
	}
}

func TestParseRouteGet(t *testing.T) {
	for _, c := range []struct {
		out   string
		local bool
		dev   string
		err   bool
	}{
		{"local 198.18.250.1 dev lo table local src 198.18.250.1 uid 0", true, "", false},
		{"10.1.2.3 via 10.0.0.1 dev eth0 src 10.0.0.9 uid 0", false, "eth0", false},
		{"192.168.5.7 dev br0 src 192.168.5.1 uid 0", false, "br0", false},
		{"unreachable 10.9.9.9 uid 0", false, "", true},
		{"", false, "", true},
	} {
		local, dev, err := parseRouteGet(c.out)
		if local != c.local || dev != c.dev || (err != nil) != c.err {
			t.Errorf("%q: %v %q %v", c.out, local, dev, err)
		}
	}
}

func TestOrphanRulesByComment(t *testing.T) {
	f := &execx.Fake{Responses: map[string]string{
		"iptables -t nat -S": "-P POSTROUTING ACCEPT\n" +
			`-A POSTROUTING -s 198.18.1.2/32 -d 10.1.2.3/32 -o eth0 -m comment --comment "wirelab lab lost22" -j MASQUERADE` + "\n" +
			`-A POSTROUTING -s 198.18.1.2/32 -m comment --comment "wirelab lab known1" -j MASQUERADE` + "\n" +
			`-A POSTROUTING -o eth0 -j MASQUERADE` + "\n",
	}}
	got := orphanRules(context.Background(), f, map[string]bool{"known1": true})
	if len(got) != 1 || len(got["lost22"]) != 1 {
		t.Fatalf("orphans %+v", got)
	}
	ru := got["lost22"][0]
	want := []string{"-s", "198.18.1.2/32", "-d", "10.1.2.3/32", "-o", "eth0", "-m", "comment", "--comment", "wirelab lab lost22", "-j", "MASQUERADE"}
	if ru.Table != "nat" || ru.Chain != "POSTROUTING" || !slices.Equal(ru.Spec, want) {
		t.Errorf("rule %+v", ru)
	}
}
