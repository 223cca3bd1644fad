package sysbench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/nstest"
)

// fakeSysbench writes a shell script standing in for sysbench and returns its path. The
// script records its argv and working directory next to itself.
func fakeSysbench(t *testing.T, body string) (bin, dir string) {
	t.Helper()
	dir = t.TempDir()
	bin = filepath.Join(dir, "sysbench")
	script := "#!/bin/sh\necho \"$@\" > " + dir + "/argv\npwd > " + dir + "/cwd\n" + body
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, dir
}

func TestRunStreamsIntervalsAsTheyArrive(t *testing.T) {
	capture, err := filepath.Abs("testdata/ro_plain.txt")
	if err != nil {
		t.Fatal(err)
	}
	// Print the header and first interval, then wait until the test has seen that
	// interval before printing the rest: a runner that buffered until exit would hang
	// here and the script would give up with exit status 3.
	bin, dir := fakeSysbench(t, `
sed -n '1,13p' `+capture+`
i=0; while [ ! -f `+"$(dirname $0)"+`/seen ]; do sleep 0.05; i=$((i+1)); [ $i -gt 200 ] && exit 3; done
sed -n '14,$p' `+capture+`
`)
	certs := t.TempDir()
	writeTLSFiles(t, certs)
	var got []Interval
	var pid int
	o := Options{Workload: "oltp_read_only", Binary: bin, TLS: true, CertDir: certs, Threads: 4,
		Time: 3 * time.Second, OnStart: func(p int) { pid = p }}
	sum, out, err := RunWithOutput(context.Background(), o, func(iv Interval) {
		if len(got) == 0 {
			if err := os.WriteFile(filepath.Join(dir, "seen"), nil, 0o644); err != nil {
				t.Error(err)
			}
		}
		got = append(got, iv)
	}, nil)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out)
	}
	if len(got) != 3 || got[0].TPS != 587.25 || got[2].TPS != 1467.08 {
		t.Errorf("intervals = %+v", got)
	}
	if sum.Transactions != 3265 || sum.LatPct != 8.74 {
		t.Errorf("summary = %+v", sum)
	}
	if want := readTestdata(t, "ro_plain.txt"); out != want {
		t.Errorf("raw output differs from what sysbench printed (%d vs %d bytes)", len(out), len(want))
	}
	if pid <= 0 {
		t.Errorf("OnStart got pid %d", pid)
	}
	// With TLS, sysbench must run in the cert dir: it reads the .pem files from there.
	cwd, _ := os.ReadFile(filepath.Join(dir, "cwd"))
	if strings.TrimSpace(string(cwd)) != certs {
		t.Errorf("cwd = %q, want %q", cwd, certs)
	}
	argv, _ := os.ReadFile(filepath.Join(dir, "argv"))
	if !strings.Contains(string(argv), "--mysql-ssl=on") || !strings.HasSuffix(strings.TrimSpace(string(argv)), " run") {
		t.Errorf("argv = %q", argv)
	}
}

func TestRunCancelKillsProcessGroup(t *testing.T) {
	bin, dir := fakeSysbench(t, `
sleep 300 &
echo $! > `+"$(dirname $0)"+`/child
echo "[ 1s ] thds: 1 tps: 1.00 qps: 1.00 (r/w/o: 1.00/0.00/0.00) lat (ms,95%): 1.00 err/s: 0.00 reconn/s: 0.00"
wait
`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	_, err := Run(ctx, Options{Workload: "oltp_read_only", Binary: bin}, func(Interval) { cancel() }, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Run took %s to return after cancel", d)
	}
	b, err := os.ReadFile(filepath.Join(dir, "child"))
	if err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(5 * time.Second)
	for nstest.Running(child) {
		if time.Now().After(deadline) {
			t.Fatalf("child %d of sysbench survived the cancel", child)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestRunFailureNamesSysbenchsReason(t *testing.T) {
	capture, err := filepath.Abs("testdata/err_password.txt")
	if err != nil {
		t.Fatal(err)
	}
	bin, _ := fakeSysbench(t, "cat "+capture+"\nexit 1\n")
	sum, out, err := RunWithOutput(context.Background(), Options{Workload: "oltp_read_only", Binary: bin}, nil, nil)
	if !errors.Is(err, ErrConnect) {
		t.Fatalf("err = %v, want ErrConnect", err)
	}
	if sum != nil || !strings.Contains(out, "Access denied") {
		t.Errorf("sum = %v, out = %q", sum, out)
	}
	if !strings.Contains(err.Error(), "error 1045: Access denied for user 'sbtest'@'127.0.0.1'") {
		t.Errorf("error does not carry the server's reason: %v", err)
	}
}

func TestPrepareRunsCleanupThenPrepare(t *testing.T) {
	bin, dir := fakeSysbench(t, `echo "$@" >> `+"$(dirname $0)"+"/calls\n")
	o := Options{Workload: "oltp_read_only", Binary: bin, Tables: 20, TableSize: 100, Threads: 512}
	if err := Prepare(context.Background(), o, nil); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "calls"))
	calls := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(calls) != 2 || !strings.HasSuffix(calls[0], " cleanup") || !strings.HasSuffix(calls[1], " prepare") {
		t.Fatalf("calls = %q", calls)
	}
	if !strings.Contains(calls[1], "--threads=8 ") {
		t.Errorf("prepare should use min(tables, 8) threads: %q", calls[1])
	}
}

// An existing server's password goes to sysbench in a 0600 config file, not on the command
// line; the file is gone when sysbench is.
func TestHidePasswordUsesAConfigFile(t *testing.T) {
	bin, dir := fakeSysbench(t, `for a in "$@"; do case $a in --config-file=*) f=${a#--config-file=}; cat $f > `+"$(dirname $0)"+`/conf; stat -c %a $f > `+"$(dirname $0)"+`/mode;; esac; done`)
	o := Options{Workload: "oltp_read_only", Binary: bin, User: "bench", Password: "s3cr#t=", HidePassword: true}
	if err := Cleanup(context.Background(), o, nil); err != nil {
		t.Fatal(err)
	}
	argv, _ := os.ReadFile(filepath.Join(dir, "argv"))
	conf, _ := os.ReadFile(filepath.Join(dir, "conf"))
	mode, _ := os.ReadFile(filepath.Join(dir, "mode"))
	if strings.Contains(string(argv), "s3cr#t") || !strings.Contains(string(argv), "--config-file=") {
		t.Errorf("argv %q: want the password out of it and a --config-file", argv)
	}
	if string(conf) != "mysql-password=s3cr#t=\n" || strings.TrimSpace(string(mode)) != "600" {
		t.Errorf("config file %q mode %q", conf, mode)
	}
	path := strings.TrimPrefix(regexpField(string(argv), "--config-file="), "--config-file=")
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("config file %s left behind: %v", path, err)
	}
}

func regexpField(s, prefix string) string {
	for _, f := range strings.Fields(s) {
		if strings.HasPrefix(f, prefix) {
			return f
		}
	}
	return ""
}

func TestHidePasswordRefusesBlanks(t *testing.T) {
	bin, dir := fakeSysbench(t, "")
	o := Options{Workload: "oltp_read_only", Binary: bin, Password: "p w", HidePassword: true}
	if err := Cleanup(context.Background(), o, nil); err == nil || !strings.Contains(err.Error(), "blank") {
		t.Fatalf("err %v, want the blank named", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "argv")); err == nil {
		t.Error("sysbench ran with a password it would have cut")
	}
	if CheckHideable("pw#1=x") != nil {
		t.Error("a password without blanks refused")
	}
}
