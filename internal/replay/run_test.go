package replay

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/querylog"
)

// childEnv makes the test binary the replayer child (TestMain), reading general logs with
// this package's test reader: Run is then tested through a real child process.
const childEnv = "WIRELAB_REPLAY_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		os.Exit(serveFake())
	}
	if os.Getenv(childEnv) == "1" && len(os.Args) > 1 && os.Args[1] == childCommand {
		fs := flag.NewFlagSet(childCommand, flag.ContinueOnError)
		c := AddChildFlags(fs)
		if err := fs.Parse(os.Args[2:]); err != nil {
			os.Exit(2)
		}
		if err := c.Run(context.Background(), openGeneral, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestRunThroughTheChild(t *testing.T) {
	t.Setenv(childEnv, "1")
	f := startFakeMySQL(t)
	o := fakeOptions(t, f)
	o.Log, o.Speed, o.Binary = "testdata/mariadb-general-mixed.log", 1, os.Args[0]
	o.Target.Password = "s3cret-pw"
	o.Launcher = execx.Local{Dir: t.TempDir()}
	var cmdline string
	o.OnStart = func(pid int) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		cmdline = strings.ReplaceAll(string(b), "\x00", " ")
	}
	var mu sync.Mutex
	var ticks []Tick
	sum, err := Run(context.Background(), o, func(tk Tick) { mu.Lock(); ticks = append(ticks, tk); mu.Unlock() })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cmdline, "--password-file") || strings.Contains(cmdline, "s3cret-pw") {
		t.Errorf("the child's command line: %q; want a password file, never the password", cmdline)
	}
	entries, _ := os.ReadDir(o.Launcher.(execx.Local).Dir)
	if len(entries) != 0 {
		t.Errorf("the password file was left behind: %v", entries)
	}
	// Sessions 25 (open before the log), 26 and 28 replayed; 27's login failed.
	if sum.Statements != 14 || sum.Errors != 1 || sum.Sessions.Replayed != 3 || sum.Sessions.NotConnected != 1 ||
		sum.RoundTrips.PerStatement != 1 || len(sum.Shapes) == 0 || sum.Speed != "1" || sum.ServerVersion != "10.11.0-fake" {
		t.Errorf("summary %+v", sum)
	}
	// The log spans 2 s at speed 1: the replay does too, and prints its seconds.
	if sum.WallS < 2 || len(ticks) < 1 || ticks[0].T < 0.9 {
		t.Errorf("wall %.2f s, ticks %+v", sum.WallS, ticks)
	}
	if figs := readSessions(t, o.SessionsFile); len(figs) != 3 || figs["26"].Statements != 11 {
		t.Errorf("sessions file %+v", figs)
	}
}

// A child that fails says why; one that prints no summary is an error too.
func TestRunChildFails(t *testing.T) {
	t.Setenv(childEnv, "1")
	f := startFakeMySQL(t)
	o := fakeOptions(t, f)
	o.Log, o.Binary = "testdata/no-such.log", os.Args[0]
	if _, err := Run(context.Background(), o, nil); err == nil || !strings.Contains(err.Error(), "no-such.log") {
		t.Errorf("missing log: err = %v", err)
	}
	o.Binary = "true"
	if _, err := Run(context.Background(), o, nil); err == nil || !strings.Contains(err.Error(), ErrNoSummary.Error()) {
		t.Errorf("no summary: err = %v", err)
	}
}

// The child reads back exactly what Args writes.
func TestArgsRoundTrip(t *testing.T) {
	o := Options{Log: "/tmp/g.log", Format: querylog.PGStderr, Speed: 2.5, For: 90e9, SkipBadLines: true,
		QueueBudget: 1 << 20, SessionsFile: "/tmp/s.jsonl",
		Target: Target{Engine: "postgres", Host: "198.18.0.2", Port: 5432, User: "sbtest", DB: "sbtest", LogDB: true, TLS: true, CA: "/tmp/ca.pem"}}
	pw := t.TempDir() + "/pw"
	os.WriteFile(pw, []byte("pw\n"), 0o600)
	args := o.Args(pw)
	if args[0] != childCommand {
		t.Fatalf("args %q", args)
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	c := AddChildFlags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		t.Fatal(err)
	}
	got, err := c.Options()
	if err != nil {
		t.Fatal(err)
	}
	want := o
	want.Target.Password = "pw"
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, want)
	}
	for _, bad := range []string{"0", "-1", "fast", "NaN"} {
		if _, err := ParseSpeed(bad); err == nil {
			t.Errorf("--speed %s accepted", bad)
		}
	}
}
