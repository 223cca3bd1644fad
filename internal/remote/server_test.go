package remote

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
)

const testDir = "/tmp/wirelab-ab12/mariadb"

func testOptions() ServerOptions {
	return ServerOptions{Agent: "/tmp/wirelab-ab12/wirelab", Dir: testDir, Bind: "198.51.100.7",
		BufferPool: "256M", StartTimeout: 3 * time.Second, StopTimeout: time.Second}
}

var readyState = ServerState{Socket: testDir + "/mysqld.sock", Host: "198.51.100.7", Port: 3306, User: "sbtest",
	Password: "pw", DB: "sbtest", Pid: 7001, Version: "10.11.19-MariaDB-0+deb12u1", CertDir: testDir + "/certs"}

// agentReports plays an agent that writes st after a moment, with mariadbd running.
func agentReports(st ServerState, log string) func(*fakeHost, int) {
	return func(f *fakeHost, pid int) {
		f.set(testDir+"/"+AgentLog(engine.MariaDB), log)
		f.serverPid = st.Pid
		go func() {
			time.Sleep(2 * pollEvery)
			if st.Pid > 0 {
				f.set("/proc/7001/stat", procStat(st.Pid, "mariadbd"))
			}
			b, _ := json.Marshal(st)
			f.set(testDir+"/"+StateFile, string(b))
		}()
	}
}

func TestStartMariaDBReadsTheAgentsState(t *testing.T) {
	f := newFakeHost()
	f.files[testDir+"/"+StateFile] = `{"pid": 1, "socket": "/old", "port": 1}` // a previous run's
	f.onStart = agentReports(readyState, "")
	f.answers["mariadb --no-defaults"] = "YES\t4200\t16777216\t2\n"
	ctx := context.Background()
	m, err := Start(ctx, f, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := "start mariadb-agent: /tmp/wirelab-ab12/wirelab agent mariadb --dir " + testDir +
		" --bind 198.51.100.7 --port 3306 --for 4h0m0s --buffer-pool 256M >> " + testDir + "/" + AgentLog(engine.MariaDB)
	if !slices.Contains(f.lines(), want) {
		t.Errorf("agent not started as %q:\n%s", want, strings.Join(f.lines(), "\n"))
	}
	c := m.Conn()
	if c != (engine.Conn{Engine: engine.MariaDB, Host: "198.51.100.7", Port: 3306, Socket: testDir + "/mysqld.sock",
		User: "sbtest", Password: "pw", DB: "sbtest", CertDir: testDir + "/certs"}) {
		t.Errorf("Conn %+v", c)
	}
	if m.Kind() != engine.MariaDB || m.Pid() != 7001 || !slices.Equal(m.Pids(), []int{7001}) || m.Version() != readyState.Version {
		t.Errorf("kind %s pid %d pids %v version %q", m.Kind(), m.Pid(), m.Pids(), m.Version())
	}
	facts, err := m.Facts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if facts.Engine != "mariadb" || facts.Version != readyState.Version || len(facts.Settings) != 4 ||
		facts.Settings[0].Name != "have_ssl" || facts.Settings[0].Value != "YES" || facts.Settings[3].Value != "2" {
		t.Errorf("facts %+v", facts)
	}
	lines := f.lines()
	if q := lines[len(lines)-1]; !strings.Contains(q, "--socket="+testDir+"/mysqld.sock") || !strings.Contains(q, "--execute=SELECT @@have_ssl, @@max_connections") {
		t.Errorf("facts query: %q", q)
	}
	if err := m.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if n := strings.Count(strings.Join(f.lines(), "\n"), "stop 4001"); n != 1 {
		t.Errorf("agent stopped %d times:\n%s", n, strings.Join(f.lines(), "\n"))
	}
}

func TestStartMariaDBFailures(t *testing.T) {
	cases := []struct {
		name    string
		onStart func(*fakeHost, int)
		is      error
		want    []string
	}{
		{"error in the state file", agentReports(ServerState{Error: "agent mariadb: start mariadb: find mariadbd: not in PATH nor /usr/sbin"},
			"level=INFO msg=starting\nlevel=ERROR msg=failed\n"), nil,
			[]string{"host db1", "not in PATH nor /usr/sbin", "mariadb-agent.log on db1", "level=ERROR msg=failed"}},
		{"agent gone", func(f *fakeHost, pid int) {
			f.set(testDir+"/"+AgentLog(engine.MariaDB), "sh: 1: exec: /tmp/wirelab-ab12/wirelab: Exec format error\n")
			f.remove("/proc/4001/stat")
		}, ErrAgentGone, []string{"host db1", "pid 4001", "Exec format error"}},
		{"no state in time", func(f *fakeHost, pid int) { f.set(testDir+"/"+AgentLog(engine.MariaDB), "initialising datadir\n") },
			ErrStartTimeout, []string{"host db1", "within 600ms", "initialising datadir"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeHost()
			f.onStart = c.onStart
			o := testOptions()
			if c.is == ErrStartTimeout {
				o.StartTimeout = 600 * time.Millisecond
			}
			_, err := Start(context.Background(), f, o)
			t.Logf("%v", err)
			if err == nil || (c.is != nil && !errors.Is(err, c.is)) {
				t.Fatalf("want %v, got %v", c.is, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q", w)
				}
			}
			if c.is != ErrAgentGone && !slices.Contains(f.lines(), "stop 4001") {
				t.Errorf("the agent was left running:\n%s", strings.Join(f.lines(), "\n"))
			}
		})
	}
}

func TestStartMariaDBRefusesIncompleteOptions(t *testing.T) {
	f := newFakeHost()
	o := testOptions()
	o.Dir = "relative"
	if _, err := Start(context.Background(), f, o); err == nil || len(f.lines()) != 0 {
		t.Errorf("relative Dir: %v, ran %q", err, f.lines())
	}
}

func TestStopKillsAMariadbdThatStays(t *testing.T) {
	f := newFakeHost()
	f.onStart = agentReports(readyState, "")
	f.stopKeepsServer = true
	o := testOptions()
	o.StopTimeout = 500 * time.Millisecond
	m, err := Start(context.Background(), f, o)
	if err != nil {
		t.Fatal(err)
	}
	err = m.Stop(context.Background())
	if err == nil || !strings.Contains(err.Error(), "still running") || !slices.Contains(f.killedPids(), "7001") {
		t.Errorf("Stop: %v\n%s", err, strings.Join(f.lines(), "\n"))
	}
}

// A Stop after the caller's context ended (a second Ctrl-C) still stops, without waiting.
func TestStopWithAnEndedContextKillsAtOnce(t *testing.T) {
	f := newFakeHost()
	f.onStart = agentReports(readyState, "")
	f.stopKeepsServer = true
	m, err := Start(context.Background(), f, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = m.Stop(ctx)
	if !errors.Is(err, context.Canceled) || !slices.Contains(f.lines(), "stop 4001") || !slices.Contains(f.killedPids(), "7001") {
		t.Errorf("Stop: %v\n%s", err, strings.Join(f.lines(), "\n"))
	}
}

func TestParseState(t *testing.T) {
	if _, err := ParseState([]byte(`{"error": "boom"}`)); err == nil || err.Error() != "boom" {
		t.Errorf("error state: %v", err)
	}
	if _, err := ParseState([]byte(`{"pid": 12}`)); err == nil {
		t.Error("a state without socket and port must be refused")
	}
	if _, err := ParseState([]byte(`{"pid": `)); err == nil {
		t.Error("half a file must be refused")
	}
	dir := t.TempDir()
	if err := WriteState(dir, readyState); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		t.Fatal(err)
	}
	if st, err := ParseState(b); err != nil || !reflect.DeepEqual(st, readyState) {
		t.Errorf("round trip: %+v, %v", st, err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, StateFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v: it holds the password", fi.Mode())
	}
}
