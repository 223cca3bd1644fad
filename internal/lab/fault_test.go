package lab

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/execx"
)

func TestDropWireInsertsAndRestoresItsRulesOnce(t *testing.T) {
	f := &execx.Fake{}
	st := &State{Namespaces: map[string]string{Wire: "wl-x-wire"}, WireIfaces: map[string]string{Replica: "to-replica"}}
	l := &Lab{State: st, runner: f, log: discard()}
	restore, err := l.DropWire(context.Background(), Replica)
	if err != nil {
		t.Fatal(err)
	}
	rule := func(op, dir string) string {
		return "ip netns exec wl-x-wire iptables -w " + op + " " + dir + " to-replica -m comment --comment " + faultComment + " -j DROP"
	}
	want := []string{rule("-I FORWARD 1", "-i"), rule("-I FORWARD 1", "-o")}
	if got := f.Lines(); !slices.Equal(got, want) {
		t.Fatalf("drop ran\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for range 2 { // idempotent: the second restore deletes nothing more
		if err := restore(); err != nil {
			t.Fatal(err)
		}
	}
	want = append(want, rule("-D FORWARD", "-o"), rule("-D FORWARD", "-i"))
	if got := f.Lines(); !slices.Equal(got, want) {
		t.Errorf("drop and restore ran\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDropWireUndoesAHalfDrop(t *testing.T) {
	f := &execx.Fake{Errors: map[string]error{"ip netns exec wl-x-wire iptables -w -I FORWARD 1 -o": errors.New("no table")}}
	st := &State{Namespaces: map[string]string{Wire: "wl-x-wire"}, WireIfaces: map[string]string{Replica: "to-replica"}}
	l := &Lab{State: st, runner: f, log: discard()}
	if _, err := l.DropWire(context.Background(), Replica); err == nil || !strings.Contains(err.Error(), "drop wire to replica") {
		t.Fatalf("err = %v, want the failed drop named", err)
	}
	if got := f.Lines(); len(got) != 3 || !strings.Contains(got[2], "-D FORWARD -i to-replica") {
		t.Errorf("the rule that went in is not taken out: %q", got)
	}
	if _, err := l.DropWire(context.Background(), Client); err == nil || !strings.Contains(err.Error(), `no link to "client"`) {
		t.Errorf("a host without a link: err = %v", err)
	}
}
