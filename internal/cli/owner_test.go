package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/lab"
)

// ownedLab saves a lab in p's state dir whose owner is pid 812 in a fake /proc, alive or
// exited.
func ownedLab(t *testing.T, p *Process, id string, alive bool) *lab.State {
	t.Helper()
	p.ProcRoot = t.TempDir()
	if alive {
		dir := filepath.Join(p.ProcRoot, "812")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		stat := "812 (wirelab) S 1 812 812 0 -1 4194560 1530 0 0 0 12 3 0 0 20 0 9 0 42715 1300000000 5000"
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st := &lab.State{RunID: id, Hosts: []string{lab.Wire, lab.Client, lab.Server},
		Namespaces: map[string]string{lab.Wire: "wl-" + id + "-wire", lab.Client: "wl-" + id + "-client", lab.Server: "wl-" + id + "-server"},
		Owner:      &lab.Owner{Pid: 812, StartTicks: 42715, Command: "study bandwidth"},
		Path:       filepath.Join(p.StateDir, id+".json")}
	if err := st.Save(); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestCommandsByHandRefuseAnOwnedLab(t *testing.T) {
	for _, args := range [][]string{
		{"link", "set", "--rate", "10mbit"},
		{"link", "check"},
		{"exec", "client", "--", "true"},
		{"down"},
		{"down", "--lab", "4ee4e7"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			p, _, errb, f := testProcess(t, true)
			ownedLab(t, p, "4ee4e7", true)
			if code := Main(args, p); code != 1 {
				t.Fatalf("exit %d, want 1; stderr: %s", code, errb)
			}
			want := "lab 4ee4e7 belongs to `wirelab study bandwidth` (pid 812), which is measuring; use --force to"
			if !strings.Contains(errb.String(), want) {
				t.Errorf("stderr %q lacks %q", errb, want)
			}
			for _, l := range f.Lines() {
				// Listings that find orphans (namespaces, tagged iptables rules) only read.
				readOnly := strings.HasPrefix(l, "ip netns list") || strings.HasPrefix(l, "iptables -t") && strings.HasSuffix(l, " -S")
				if !readOnly {
					t.Errorf("refused command still ran %q", l)
				}
			}
			if _, err := os.Stat(filepath.Join(p.StateDir, "4ee4e7.json")); err != nil {
				t.Errorf("owned lab's state touched: %v", err)
			}
		})
	}
}

func TestDownAllSkipsOwnedLabsAndFails(t *testing.T) {
	p, out, errb, _ := testProcess(t, true)
	ownedLab(t, p, "4ee4e7", true)
	byHand := &lab.State{RunID: "aaaaaa", Path: filepath.Join(p.StateDir, "aaaaaa.json")}
	if err := byHand.Save(); err != nil {
		t.Fatal(err)
	}
	if code := Main([]string{"down", "--all"}, p); code != 1 {
		t.Fatalf("exit %d, want 1 (a lab was skipped); stderr: %s", code, errb)
	}
	if !strings.Contains(out.String(), "lab aaaaaa removed") || !strings.Contains(out.String(), "lab 4ee4e7 skipped: it belongs to `wirelab study bandwidth` (pid 812)") {
		t.Errorf("stdout:\n%s", out)
	}
	if ids, _ := lab.List(p.StateDir); len(ids) != 1 || ids[0] != "4ee4e7" {
		t.Errorf("labs left %v, want the owned one only", ids)
	}
}

func TestExitedOwnerDoesNotProtectItsLab(t *testing.T) {
	p, out, errb, _ := testProcess(t, true)
	st := ownedLab(t, p, "4ee4e7", false)
	if err := Main([]string{"status"}, p); err != 0 {
		t.Fatalf("status: %d %s", err, errb)
	}
	if !strings.Contains(out.String(), "owner    `wirelab study bandwidth` (pid 812), no longer running") {
		t.Errorf("status:\n%s", out)
	}
	if code := Main([]string{"down"}, p); code != 0 {
		t.Fatalf("down of a lab whose owner exited: %d %s", code, errb)
	}
	if _, err := os.Stat(st.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state left: %v", err)
	}
}

func TestStatusShowsTheOwner(t *testing.T) {
	p, out, _, _ := testProcess(t, true)
	ownedLab(t, p, "4ee4e7", true)
	Main([]string{"status"}, p)
	if !strings.Contains(out.String(), "owner    `wirelab study bandwidth` (pid 812), measuring") {
		t.Errorf("status:\n%s", out)
	}
	p2, out2, _, _ := testProcess(t, true)
	_ = (&lab.State{RunID: "bbbbbb", Path: filepath.Join(p2.StateDir, "bbbbbb.json")}).Save()
	Main([]string{"status"}, p2)
	if !strings.Contains(out2.String(), "owner    by hand (wirelab up)") {
		t.Errorf("status of a lab by hand:\n%s", out2)
	}
}
