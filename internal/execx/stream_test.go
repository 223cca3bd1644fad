package execx

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStreamedRun(t *testing.T) {
	var outs, errs []string
	var pid int
	s := Streamed{Name: "sh", Args: []string{"-c", `echo "$GREETING"; echo e1 >&2; echo o2; echo e2 >&2; exit 3`},
		Env: []string{"GREETING=hello"}, OnStart: func(p int) { pid = p },
		OnStdout: func(l string) { outs = append(outs, l) }, OnStderr: func(l string) { errs = append(errs, l) }}
	stdout, stderr, err := s.Run(context.Background())
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("err = %v, want exit status 3", err)
	}
	if stdout != "hello\no2\n" || stderr != "e1\ne2\n" || pid <= 0 {
		t.Errorf("stdout %q stderr %q pid %d", stdout, stderr, pid)
	}
	if strings.Join(outs, ",") != "hello,o2" || strings.Join(errs, ",") != "e1,e2" {
		t.Errorf("lines: %q %q", outs, errs)
	}
}

func TestStreamedRunCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	// The sleep is a grandchild: killing the process group must end it too, or Run would
	// wait for its stdout to close.
	s := Streamed{Name: "sh", Args: []string{"-c", "echo go; sleep 60; echo never"},
		OnStdout: func(string) { cancel() }}
	if _, _, err := s.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancel took %s", d)
	}
}

// A private file goes in the launcher's Dir when it has one (the lab's directory, which
// its teardown removes), readable by its owner alone.
func TestLocalTempFileInDir(t *testing.T) {
	dir := t.TempDir()
	path, remove, err := Local{Dir: dir}.TempFile(context.Background(), []byte("mysql-password=x\n"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || filepath.Dir(path) != dir || st.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v, mode %v; want a 0600 file in %s", path, err, st.Mode().Perm(), dir)
	}
	remove()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s still there after remove: %v", path, err)
	}
}
