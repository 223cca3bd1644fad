package pgbench

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/nstest"
)

func TestRunArgs(t *testing.T) {
	base := Options{Clients: 10, Time: 2500 * time.Millisecond, Host: "198.18.0.2", Port: 5432,
		User: "sbtest", Password: "pw", DB: "sbtest"}
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"select-only over TCP", func() Options { o := base; o.Builtin = SelectOnly; return o }(),
			"-S -c 10 -j 4 -T 3 -P 1 -h 198.18.0.2 -p 5432 -U sbtest sbtest"},
		{"tpc-b default, rate, protocol, no vacuum, no progress", func() Options {
			o := base
			o.Jobs, o.Rate, o.Protocol, o.NoVacuum, o.Progress = 2, 500, "prepared", true, -1
			return o
		}(), "-c 10 -j 2 -T 3 -R 500 -M prepared -n -h 198.18.0.2 -p 5432 -U sbtest sbtest"},
		{"transactions over the socket", Options{Builtin: SimpleUpdate, Clients: 2, Transactions: 200,
			Progress: 5, Host: "/lab/srv/run", Port: 5432, DB: "sbtest"},
			"-N -c 2 -j 2 -t 200 -P 5 -h /lab/srv/run -p 5432 sbtest"},
		{"zero options", Options{}, "-c 1 -j 1 -P 1"},
		{"per-transaction log", func() Options { o := base; o.logPrefix = "/tmp/wl/tx"; return o }(),
			"-c 10 -j 4 -T 3 -P 1 -l --log-prefix=/tmp/wl/tx -h 198.18.0.2 -p 5432 -U sbtest sbtest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.o.validate(); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(tt.o.RunArgs(), " "); got != tt.want {
				t.Errorf("RunArgs:\n got %s\nwant %s", got, tt.want)
			}
			if strings.Contains(strings.Join(tt.o.RunArgs(), " "), "pw") {
				t.Error("password on the command line")
			}
		})
	}
}

func TestInitArgs(t *testing.T) {
	o := Options{Scale: 10, Host: "127.0.0.1", Port: 5432, User: "sbtest", DB: "sbtest", Clients: 8}
	if got := strings.Join(o.InitArgs(), " "); got != "-i -q -s 10 -h 127.0.0.1 -p 5432 -U sbtest sbtest" {
		t.Errorf("InitArgs = %s", got)
	}
	if got := strings.Join((Options{}).InitArgs(), " "); got != "-i -q -s 1" {
		t.Errorf("InitArgs of zero options = %s", got)
	}
}

func TestEnv(t *testing.T) {
	if got := strings.Join((Options{Password: "pw"}).Env(), " "); got != "PGSSLMODE=disable PGPASSWORD=pw" {
		t.Errorf("Env = %s", got)
	}
	if got := strings.Join((Options{SSLMode: "verify-full", SSLRootCert: "/lab/certs/ca.pem"}).Env(), " "); got != "PGSSLMODE=verify-full PGSSLROOTCERT=/lab/certs/ca.pem" {
		t.Errorf("Env = %s", got)
	}
}

func TestValidate(t *testing.T) {
	for _, o := range []Options{
		{Builtin: "tpcc"}, {Protocol: "binary"}, {Clients: -1}, {Clients: 2, Jobs: 3}, {Time: -time.Second},
	} {
		if err := o.validate(); !errors.Is(err, ErrBadOptions) {
			t.Errorf("validate(%+v) = %v, want ErrBadOptions", o, err)
		}
	}
}

// Run and Init start pgbench in the cgroup they are given (the lab's, so `wirelab down`
// finds it): with a cgroup that does not exist, nothing starts.
func TestStartsInItsCgroup(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	fake := filepath.Join(dir, "pgbench")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\ntouch "+mark+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	o := Options{Binary: fake, Cgroup: filepath.Join(dir, "no-such-cgroup")}
	ctx := context.Background()
	if _, err := Run(ctx, o, nil, nil); err == nil || !strings.Contains(err.Error(), "open cgroup") {
		t.Errorf("Run in a missing cgroup: %v", err)
	}
	if err := Init(ctx, o, nil); err == nil || !strings.Contains(err.Error(), "open cgroup") {
		t.Errorf("Init in a missing cgroup: %v", err)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("pgbench started outside its cgroup")
	}
	o.Cgroup = "" // this process's cgroup: it runs
	if _, err := Run(ctx, o, nil, nil); err == nil {
		t.Error("the fake pgbench's exit 1 was not an error")
	}
	if _, err := os.Stat(mark); err != nil {
		t.Errorf("without a cgroup the fake pgbench did not run: %v", err)
	}
}

// Statements agrees with the scripts the installed pgbench runs (--show-script prints
// them; lines starting with a backslash are client-side meta-commands, not statements).
func TestStatementsMatchTheBuiltinScripts(t *testing.T) {
	bin := binaryOrDefault("")
	if _, err := exec.LookPath(bin); err != nil {
		nstest.Unavailable(t, "pgbench not installed: %v", err)
	}
	for _, b := range Builtins {
		// pgbench is there: an error now is a script name it does not know, not a skip.
		out, err := exec.Command(bin, "--show-script="+b).CombinedOutput()
		if err != nil {
			t.Fatalf("pgbench --show-script=%s: %v: %s", b, err, out)
		}
		n := 0
		for _, l := range strings.Split(string(out), "\n") {
			l = strings.TrimSpace(l)
			if l != "" && !strings.HasPrefix(l, `\`) && !strings.HasPrefix(l, "--") {
				n++
			}
		}
		if n != Statements(b) {
			t.Errorf("%s: the script has %d statements, Statements says %d:\n%s", b, n, Statements(b), out)
		}
	}
	if Statements("tpcc") != 0 {
		t.Error("an unknown script has statements")
	}
}
