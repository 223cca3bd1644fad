package e2e

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/nstest"
)

var bin string

func TestMain(m *testing.M) {
	flag.Parse()
	if os.Geteuid() != 0 || testing.Short() {
		os.Exit(m.Run()) // every test skips
	}
	dir, err := os.MkdirTemp("", "wirelab-e2e-bin-")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "wirelab")
	out, err := exec.Command("go", "build", "-o", bin, "../../cmd/wirelab").CombinedOutput()
	if err != nil {
		panic("build wirelab: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// skipUnlessRoot: the e2e tests build labs (network namespaces, tc, iptables, real
// servers), so they need root and the tools; -short is for unit tests and skips them.
func skipUnlessRoot(t testing.TB) {
	t.Helper()
	nstest.SkipUnlessRoot(t, "mariadbd", "sysbench", "iperf3")
}

// wl runs the binary with a private state dir and returns stdout; it fails the test on a
// non-zero exit unless allowFail.
func wl(t *testing.T, stateDir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "WIRELAB_STATE_DIR="+stateDir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("wirelab %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// labRunID reads the only lab's run id from the state dir.
func labRunID(t *testing.T, stateDir string) string {
	t.Helper()
	ents, _ := os.ReadDir(stateDir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			return strings.TrimSuffix(e.Name(), ".json")
		}
	}
	return ""
}

// assertTunnelLogs checks that a run through the tunnel kept both ends' logs in its
// results directory, each with its first line (the end listening, in its role).
func assertTunnelLogs(t *testing.T, out string) {
	t.Helper()
	for _, role := range []string{"exit", "entry"} {
		b, err := os.ReadFile(filepath.Join(out, "tunnel-"+role+".log"))
		if err != nil {
			t.Errorf("the tunnel %s's log is not with the results: %v", role, err)
			continue
		}
		if s := string(b); !strings.Contains(s, `msg="tunnel listening"`) || !strings.Contains(s, "role="+role) {
			t.Errorf("tunnel-%s.log has no line of the %s listening:\n%.500s", role, role, s)
		}
	}
}

// assertGone checks that nothing of lab id is left: namespaces, processes in them, temp dirs.
func assertGone(t *testing.T, id string) {
	t.Helper()
	out, _ := exec.Command("ip", "netns", "list").Output()
	if strings.Contains(string(out), "wl-"+id+"-") {
		t.Errorf("namespaces of lab %s left:\n%s", id, out)
	}
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), "wirelab-"+id+"-*"))
	if len(matches) > 0 {
		t.Errorf("temp dirs of lab %s left: %v", id, matches)
	}
	ps, _ := exec.Command("pgrep", "-af", "wirelab-"+id).Output()
	if len(bytes.TrimSpace(ps)) > 0 {
		t.Errorf("processes of lab %s left:\n%s", id, ps)
	}
}

func TestUpIperfSysbenchDown(t *testing.T) {
	skipUnlessRoot(t)
	state := t.TempDir()
	wl(t, state, "up", "--rate", "50mbit")
	id := labRunID(t, state)
	if id == "" {
		t.Fatal("no lab state after up")
	}
	t.Cleanup(func() { wl(t, state, "down", "--lab", id); assertGone(t, id) })

	status := wl(t, state, "status")
	for _, want := range []string{"wl-" + id + "-client", "wl-" + id + "-server", "rate 50mbit", "WIRELAB_DB_PASSWORD="} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}

	// iperf3 through the wire: server in the server host, client in the client host.
	srv := exec.Command(bin, "exec", "server", "--", "iperf3", "-s", "-1", "-B", "198.18.0.2", "-p", "5301")
	srv.Env = append(os.Environ(), "WIRELAB_STATE_DIR="+state)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	time.Sleep(500 * time.Millisecond)
	js := wl(t, state, "exec", "client", "--", "iperf3", "-c", "198.18.0.2", "-p", "5301", "-t", "5", "-O", "1", "-J")
	var ip struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
			SenderCongestion string `json:"sender_tcp_congestion"`
		} `json:"end"`
	}
	if err := json.Unmarshal([]byte(js), &ip); err != nil {
		t.Fatalf("iperf3 json: %v\n%s", err, js)
	}
	// The lab's hosts use cubic unless asked otherwise, whatever the machine's default.
	if avail, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control"); err == nil &&
		slices.Contains(strings.Fields(string(avail)), "cubic") && ip.End.SenderCongestion != "cubic" {
		t.Errorf("iperf3's sender in the client host used %q; want the lab's default cubic", ip.End.SenderCongestion)
	}
	got := ip.End.SumReceived.BitsPerSecond
	if got < 50e6*0.93 || got > 50e6*1.07 {
		t.Errorf("iperf3 through a 50mbit wire: %.2f Mbit/s, want within 7%% of 50", got/1e6)
	}
	t.Logf("iperf3: %.2f Mbit/s through 50mbit, congestion control %s", got/1e6, ip.End.SenderCongestion)

	// A 3 s sysbench point from the client host, with the lab's environment.
	sb := wl(t, state, "exec", "client", "--", "sh", "-c",
		`sysbench oltp_point_select --mysql-host=$WIRELAB_SERVER_HOST --mysql-port=$WIRELAB_SERVER_PORT `+
			`--mysql-user=$WIRELAB_DB_USER --mysql-password=$WIRELAB_DB_PASSWORD --mysql-db=$WIRELAB_DB_NAME `+
			`--tables=1 --table-size=1000 prepare >/dev/null && `+
			`sysbench oltp_point_select --mysql-host=$WIRELAB_SERVER_HOST --mysql-port=$WIRELAB_SERVER_PORT `+
			`--mysql-user=$WIRELAB_DB_USER --mysql-password=$WIRELAB_DB_PASSWORD --mysql-db=$WIRELAB_DB_NAME `+
			`--tables=1 --table-size=1000 --threads=2 --time=3 run`)
	m := regexp.MustCompile(`transactions:\s+(\d+)\s+\(([\d.]+) per sec`).FindStringSubmatch(sb)
	if m == nil || m[1] == "0" {
		t.Fatalf("sysbench point made no transactions:\n%s", sb)
	}
	t.Logf("sysbench point select: %s TPS", m[2])

	wl(t, state, "down")
	assertGone(t, id)
}

func TestDownAfterKill9(t *testing.T) {
	skipUnlessRoot(t)
	state := t.TempDir()
	out := t.TempDir()
	cmd := exec.Command(bin, "run", "--rate", "20mbit", "--threads", "4", "--duration", "30s",
		"--warmup", "0s", "--tables", "1", "--table-size", "1000", "--out", out)
	cmd.Env = append(os.Environ(), "WIRELAB_STATE_DIR="+state)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the point is running (sysbench alive in the client host), then SIGKILL.
	deadline := time.Now().Add(90 * time.Second)
	var id string
	for time.Now().Before(deadline) {
		id = labRunID(t, state)
		if id != "" {
			pids, _ := exec.Command("ip", "netns", "pids", "wl-"+id+"-client").Output()
			if len(bytes.TrimSpace(pids)) > 0 {
				break
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if id == "" {
		_ = cmd.Process.Kill()
		t.Fatalf("run never brought a lab up:\n%s", errb.String())
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if out, _ := exec.Command("ip", "netns", "list").Output(); !strings.Contains(string(out), "wl-"+id) {
		t.Fatalf("expected the killed run to leave its lab behind for down to remove")
	}
	o := wl(t, state, "down")
	if !strings.Contains(o, id) {
		t.Errorf("down did not report lab %s: %s", id, o)
	}
	assertGone(t, id)
	if o := wl(t, state, "down"); !strings.Contains(o, "no lab") {
		t.Errorf("second down: %q, want 'no lab is up'", o)
	}
}
