package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/mariadb"
	"github.com/wirelab/wirelab/internal/nstest"
)

// The existing server listens on an address of the benchmarking range that the test puts
// on an interface of its own in this machine's namespace (a veth pair with both ends here:
// the kernel may have no dummy driver): traffic stays on addresses the tests own.
const extAddr = "198.18.250.1"

// externalMariaDB starts a MariaDB outside any lab, in this machine's namespace on
// extAddr, with user wlx on database wlext and a table of the user's own (keep) that
// wirelab must leave alone. Cleanup stops it and removes the interface.
func externalMariaDB(t *testing.T) (port int, srv *mariadb.Server) {
	t.Helper()
	for _, argv := range [][]string{{"link", "add", "wlt-ext", "type", "veth", "peer", "name", "wlt-ext-p"},
		{"addr", "add", extAddr + "/32", "dev", "wlt-ext"}, {"link", "set", "wlt-ext", "up"}} {
		if out, err := exec.Command("ip", argv...).CombinedOutput(); err != nil {
			_ = exec.Command("ip", "link", "del", "wlt-ext").Run()
			t.Fatalf("ip %s: %v: %s", strings.Join(argv, " "), err, out)
		}
	}
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", "wlt-ext").Run() })
	ln, err := net.Listen("tcp", extAddr+":0")
	if err != nil {
		t.Fatal(err)
	}
	port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port, existingOnHost(t, "", extAddr, port)
}

// machineState is what of this machine's own namespace a lab must leave as it found it:
// interfaces, addresses, routes, iptables rules and forwarding sysctls.
func machineState(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, argv := range [][]string{{"ip", "-o", "link", "show"}, {"ip", "-4", "-o", "addr", "show"}, {"ip", "-4", "route", "show", "table", "all"},
		{"iptables", "-S"}, {"iptables", "-t", "nat", "-S"}, {"sysctl", "net.ipv4.ip_forward"}, {"sh", "-c", "sysctl -a 2>/dev/null | grep -E 'ipv4.conf.*forwarding'"}} {
		out, _ := exec.Command(argv[0], argv[1:]...).Output()
		for _, line := range strings.Split(string(out), "\n") {
			if argv[1] == "-o" && argv[2] == "link" { // names only: counters and states move
				if f := strings.Fields(line); len(f) > 1 {
					line = f[1]
				}
			}
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// `wirelab run --server-dsn` against a MariaDB outside the lab: sysbench in the client host
// reaches it through the shaped wire, the report marks it external, the tables wirelab made
// are gone afterwards and nothing of the lab stays on the machine.
func TestServerDSNRunAgainstAnExistingMariaDB(t *testing.T) {
	skipUnlessRoot(t)
	port, srv := externalMariaDB(t)
	dsn := "wlx@tcp(" + extAddr + ":" + strconv.Itoa(port) + ")/wlext"
	state, out := t.TempDir(), t.TempDir()
	before := machineState(t)

	// A wrong password: a usage error naming the server, before any host is made.
	cmd := exec.Command(bin, "run", "--server-dsn", dsn, "--rate", "20mbit", "--out", t.TempDir())
	cmd.Env = append(os.Environ(), "WIRELAB_STATE_DIR="+state, "WIRELAB_SERVER_PASSWORD=wrong")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(errb.String(), extAddr+":"+strconv.Itoa(port)) ||
		!strings.Contains(errb.String(), "WIRELAB_SERVER_PASSWORD") {
		t.Errorf("wrong password: exit %d (%v), stderr %q; want 2 naming the server and the password's source", code, err, errb.String())
	}
	if id := labRunID(t, state); id != "" {
		t.Errorf("a refused login left lab %s", id)
	}
	if after := machineState(t); after != before {
		t.Errorf("a refused login changed the machine:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	t.Setenv("WIRELAB_SERVER_PASSWORD", existingPW)
	wl(t, state, "run", "--server-dsn", dsn, "--rate", "20mbit", "--threads", "4", "--duration", "3s", "--warmup", "1s",
		"--tables", "1", "--table-size", "1000", "--out", out)
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var run struct {
		RunID       string `json:"run_id"`
		Notes       []string
		Environment struct {
			Server struct {
				External bool   `json:"external"`
				Version  string `json:"version"`
			} `json:"server"`
		} `json:"environment"`
		Points []struct {
			TPS        float64 `json:"tps"`
			Up         float64 `json:"wire_bytes_per_s_up"`
			Down       float64 `json:"wire_bytes_per_s_down"`
			Util       float64 `json:"link_utilization"`
			CPUServer  float64 `json:"cpu_server"`
			Bottleneck string  `json:"bottleneck"`
			Why        string  `json:"bottleneck_why"`
			Failed     bool    `json:"failed"`
		} `json:"points"`
	}
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	if !run.Environment.Server.External || !strings.Contains(run.Environment.Server.Version, "MariaDB") {
		t.Errorf("environment.server %+v: want external with its version", run.Environment.Server)
	}
	if len(run.Points) != 1 {
		t.Fatalf("%d points, want 1", len(run.Points))
	}
	p := run.Points[0]
	t.Logf("existing server through 20mbit: %.0f TPS, up %.0f B/s, down %.0f B/s, utilisation %.2f, %s (%s)", p.TPS, p.Up, p.Down, p.Util, p.Bottleneck, p.Why)
	if p.Failed || p.TPS <= 0 || p.Up <= 0 || p.Down <= 0 {
		t.Errorf("point %+v: want transactions and bytes both ways on the wire", p)
	}
	// oltp_read_only fills 20mbit server->client from one thread on: the traffic crossed
	// the shaped wire, not a shortcut around it.
	if p.Util < 0.85 || p.Util > 1.05 || p.Bottleneck != "network" {
		t.Errorf("utilisation %.2f, verdict %s: want the 20mbit link full", p.Util, p.Bottleneck)
	}
	if p.CPUServer != 0 {
		t.Errorf("cpu_server %.2f for a server wirelab cannot see", p.CPUServer)
	}
	if !strings.Contains(strings.Join(run.Notes, " "), "not started by wirelab") {
		t.Errorf("notes do not say the server was external: %q", run.Notes)
	}
	report, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(report), "external: not started by wirelab, no server CPU measured") {
		t.Errorf("report.md does not mark the server external")
	}

	assertGone(t, run.RunID)
	if after := machineState(t); after != before {
		t.Errorf("the run changed the machine:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	tables, err := srv.Exec(context.Background(), "SELECT table_name FROM information_schema.tables WHERE table_schema='wlext'")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(tables); len(got) != 1 || got[0] != "keep" {
		t.Errorf("tables in wlext after the run: %v, want the user's keep alone", got)
	}
}

// The existing server on another host (a namespace the test makes, behind a veth from this
// machine): this machine forwards for the lab's client and masquerades it. A kill -9 in the
// middle of the run leaves the forwarding and the rule recorded, and `down` undoes them.
func TestServerDSNOnAnotherHostSurvivesKill9(t *testing.T) {
	skipUnlessRoot(t)
	const hostAddr, rootAddr = "198.18.251.2", "198.18.251.1"
	ns := nstest.Netns(t, "extr")
	for _, argv := range [][]string{{"link", "add", "wlt-r", "type", "veth", "peer", "name", "eth0", "netns", ns},
		{"addr", "add", rootAddr + "/30", "dev", "wlt-r"}, {"link", "set", "wlt-r", "up"},
		{"-n", ns, "addr", "add", hostAddr + "/30", "dev", "eth0"}, {"-n", ns, "link", "set", "eth0", "up"}} {
		if out, err := exec.Command("ip", argv...).CombinedOutput(); err != nil {
			_ = exec.Command("ip", "link", "del", "wlt-r").Run()
			t.Fatalf("ip %s: %v: %s", strings.Join(argv, " "), err, out)
		}
	}
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", "wlt-r").Run() })
	existingOnHost(t, ns, hostAddr, 3306)
	confs, _ := filepath.Glob("/tmp/wirelab-*.conf") // a password file in the temp directory
	state := t.TempDir()
	before := machineState(t)
	cmd := exec.Command(bin, "run", "--server-dsn", "wlx@tcp("+hostAddr+":3306)/wlext", "--rate", "20mbit", "--threads", "4",
		"--duration", "30s", "--warmup", "0s", "--tables", "1", "--table-size", "1000", "--out", t.TempDir())
	cmd.Env = append(os.Environ(), "WIRELAB_STATE_DIR="+state, "WIRELAB_SERVER_PASSWORD="+existingPW)
	logPath := filepath.Join(t.TempDir(), "stderr")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill once the point is measuring: the wire's check is done and sysbench runs.
	var id string
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if b, _ := os.ReadFile(logPath); bytes.Contains(b, []byte("point 1")) {
			id = labRunID(t, state)
			time.Sleep(2 * time.Second)
			break
		}
	}
	nat, _ := exec.Command("iptables", "-t", "nat", "-S", "POSTROUTING").Output()
	fwd, _ := exec.Command("sysctl", "-n", "net.ipv4.conf.wlt-r.forwarding").Output()
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	logs, _ := os.ReadFile(logPath)
	if id == "" {
		t.Fatalf("the run never measured:\n%s", logs)
	}
	if !strings.Contains(string(nat), "wirelab lab "+id) || strings.TrimSpace(string(fwd)) != "1" {
		t.Errorf("while measuring: nat %q, forwarding on wlt-r %q; want the lab's MASQUERADE rule and 1", nat, fwd)
	}
	wl(t, state, "down")
	assertGone(t, id)
	if after := machineState(t); after != before {
		t.Errorf("down after kill -9 left changes on the machine:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// sysbench's password file (its --config-file) was in the lab's directory, gone with it.
	if after, _ := filepath.Glob("/tmp/wirelab-*.conf"); len(after) > len(confs) {
		t.Errorf("password files left in /tmp after down: %v (before: %v)", after, confs)
	}
}
