package lab

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/execx"
)

func TestBuildPlansHostsWireAndRoutes(t *testing.T) {
	f := &execx.Fake{}
	dir := t.TempDir()
	st := &State{RunID: "abc123", Namespaces: map[string]string{}, WireIfaces: map[string]string{},
		Path: filepath.Join(dir, "abc123.json"), TempDir: t.TempDir()}
	l := &Lab{State: st, runner: f, log: discard()}
	if err := l.build(context.Background(), []string{Client, Server}); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(f.Lines(), "\n")
	for _, want := range []string{
		"ip netns add wl-abc123-wire",
		"ip netns add wl-abc123-client",
		"ip netns add wl-abc123-server",
		"ip link add eth0 netns wl-abc123-server type veth peer name to-server netns wl-abc123-wire",
		"ip -n wl-abc123-server addr add 198.18.0.2/24 dev eth0",
		"ip -n wl-abc123-wire addr add 198.18.1.1/24 dev to-client",
		"ip -n wl-abc123-client route add default via 198.18.1.1",
		"ip netns exec wl-abc123-wire sysctl -q -w net.ipv4.ip_forward=1",
		"ip netns exec wl-abc123-client sysctl -q -w net.core.somaxconn=65535",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing step %q in:\n%s", want, got)
		}
	}
	// The state on disk names every host so that Down finds them after a kill -9.
	saved, err := Load(dir, "abc123")
	if err != nil {
		t.Fatal(err)
	}
	if len(saved.Hosts) != 3 || saved.WireIfaces[Server] != "to-server" {
		t.Errorf("saved state %+v", saved)
	}
}

func TestDownHalfBuiltAndTwice(t *testing.T) {
	dir := t.TempDir()
	tmp, err := os.MkdirTemp("", "wirelab-zz9999-")
	if err != nil {
		t.Fatal(err)
	}
	st := &State{RunID: "zz9999", Hosts: []string{Wire, Client, Server},
		Namespaces: map[string]string{Wire: "wl-zz9999-wire", Client: "wl-zz9999-client", Server: "wl-zz9999-server"},
		Path:       filepath.Join(dir, "zz9999.json"), TempDir: tmp}
	if err := st.Save(); err != nil {
		t.Fatal(err)
	}
	// Only the wire namespace got created before the failure.
	f := &execx.Fake{Responses: map[string]string{"ip netns list": "wl-zz9999-wire (id: 3)\nother\n"}}
	if err := DownState(context.Background(), f, st, nil); err != nil {
		t.Fatal(err)
	}
	lines := strings.Join(f.Lines(), "\n")
	if !strings.Contains(lines, "ip netns del wl-zz9999-wire") || strings.Contains(lines, "del wl-zz9999-client") {
		t.Errorf("down should delete exactly the namespaces that exist:\n%s", lines)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temp dir left: %v", err)
	}
	if _, err := os.Stat(st.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state file left: %v", err)
	}
	// Twice: nothing exists any more, no error.
	f2 := &execx.Fake{}
	if err := DownState(context.Background(), f2, st, nil); err != nil {
		t.Fatalf("second down: %v", err)
	}
}

func TestDownKeepsStateWhenDeleteFails(t *testing.T) {
	dir := t.TempDir()
	st := &State{RunID: "yy1111", Hosts: []string{Wire}, Namespaces: map[string]string{Wire: "wl-yy1111-wire"},
		Path: filepath.Join(dir, "yy1111.json")}
	if err := st.Save(); err != nil {
		t.Fatal(err)
	}
	f := &execx.Fake{Responses: map[string]string{"ip netns list": "wl-yy1111-wire\n"},
		Errors: map[string]error{"ip netns del": errors.New("busy")}}
	if err := DownState(context.Background(), f, st, nil); err == nil {
		t.Fatal("want the delete error")
	}
	if _, err := os.Stat(st.Path); err != nil {
		t.Errorf("state must stay so a later down can retry: %v", err)
	}
}

func TestLoadPicksTheOnlyLabOrAsks(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir, ""); !errors.Is(err, ErrNoLab) {
		t.Fatalf("empty dir: %v", err)
	}
	for _, id := range []string{"aaaaaa", "bbbbbb"} {
		st := &State{RunID: id, Path: filepath.Join(dir, id+".json")}
		if err := st.Save(); err != nil {
			t.Fatal(err)
		}
		if id == "aaaaaa" {
			got, err := Load(dir, "")
			if err != nil || got.RunID != "aaaaaa" {
				t.Fatalf("one lab: %v %v", got, err)
			}
		}
	}
	if _, err := Load(dir, ""); !errors.Is(err, ErrManyLabs) {
		t.Fatalf("two labs: %v", err)
	}
	if got, err := Load(dir, "bbbbbb"); err != nil || got.RunID != "bbbbbb" {
		t.Fatalf("--lab bbbbbb: %v %v", got, err)
	}
}

func TestOrphansAreLabNamespacesWithoutState(t *testing.T) {
	dir := t.TempDir()
	st := &State{RunID: "known1", Path: filepath.Join(dir, "known1.json")}
	_ = st.Save()
	f := &execx.Fake{Responses: map[string]string{"ip netns list": "wl-known1-wire\nwl-lost22-wire (id: 1)\nwl-lost22-server\nwlt-x-a\nmine\n"}}
	got := Orphans(context.Background(), f, dir)
	if len(got) != 1 || len(got["lost22"]) != 2 {
		t.Errorf("orphans %v, want lost22 with wire+server", got)
	}
}

func TestFindTempDirOfALabWithoutState(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	if got := FindTempDir("abc123"); got != "" {
		t.Errorf("no dir: %q", got)
	}
	dir, err := os.MkdirTemp("", "wirelab-abc123-")
	if err != nil {
		t.Fatal(err)
	}
	if got := FindTempDir("abc123"); got != dir {
		t.Errorf("FindTempDir %q, want %q", got, dir)
	}
	if got := FindTempDir("abc12"); got != "" {
		t.Errorf("a prefix of the id matched: %q", got)
	}
}
