package remote

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/hosts"
	"github.com/wirelab/wirelab/internal/nstest"
)

// The root test builds two SSH hosts in namespaces of their own, on a /24 no other test
// uses: A (the client, where wirelab and the mariadb client are) and B (the server).
const rootAddrA, rootAddrB = "198.18.11.5", "198.18.11.6"

func dialB(t *testing.T, p *nstest.SSHPair) *hosts.SSH {
	t.Helper()
	cfg := hosts.SSHConfig{Name: "server1", Addr: rootAddrB, User: "root", KeyFile: p.Key, KnownHosts: p.KnownHosts,
		Timeout: 3 * time.Second, Dial: nstest.DialIn(p.NSA)}
	h, err := hosts.DialSSHWait(context.Background(), cfg, 5*time.Second)
	if err != nil {
		t.Fatalf("dial server1: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// netnsProcs lists what runs in ns as "pid comm".
func netnsProcs(ns string) []string {
	out, _ := exec.Command("ip", "netns", "pids", ns).Output()
	var procs []string
	for _, pid := range strings.Fields(string(out)) {
		comm, _ := os.ReadFile("/proc/" + pid + "/comm")
		procs = append(procs, pid+" "+strings.TrimSpace(string(comm)))
	}
	return procs
}

func TestRemoteMariaDBOverSSH(t *testing.T) {
	nstest.SkipUnlessSSHD(t)
	nstest.SkipUnlessRoot(t, "mariadb", "mariadb-install-db")
	if _, err := os.Stat("/usr/sbin/mariadbd"); err != nil {
		nstest.Unavailable(t, "needs mariadbd (apt-get install mariadb-server)")
	}
	bin := nstest.WirelabBinary(t)
	p := nstest.NewSSHPair(t, rootAddrA, rootAddrB)
	h := dialB(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t0 := time.Now()
	phase := func(what string) { t.Logf("%6.2fs %s", time.Since(t0).Seconds(), what) }

	// The host's temp dir: the agent there, the server's directory beside it.
	dir := nstest.SharedDir(t, "wlrm-")
	f, err := os.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	agent := filepath.Join(dir, "wirelab")
	if err := h.Copy(ctx, f, agent, 0o755); err != nil {
		t.Fatal(err)
	}
	phase("agent copied")

	// A directory the mysql user cannot reach: the agent's error comes back, with its log.
	private := filepath.Join(dir, "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err = Start(ctx, h, ServerOptions{Agent: agent, Dir: filepath.Join(private, "db"), Bind: rootAddrB})
	t.Logf("unreachable dir: %v", err)
	if err == nil || !strings.Contains(err.Error(), "host server1") || !strings.Contains(err.Error(), "cannot traverse") ||
		!strings.Contains(err.Error(), AgentLog(engine.MariaDB)+" on server1") {
		t.Errorf("a start that fails: %v", err)
	}
	phase("failed start reported")
	m, err := Start(ctx, h, ServerOptions{Agent: agent, Dir: filepath.Join(dir, "db"), Bind: rootAddrB,
		BufferPool: "64M", For: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Stop(context.Background()) })
	phase("mariadb started: " + m.Version())
	c := m.Conn()
	if c.Host != rootAddrB || c.Port != 3306 || c.Socket != filepath.Join(dir, "db", "mysqld.sock") || c.Password == "" || m.Pid() <= 1 {
		t.Errorf("conn %+v, pid %d", c, m.Pid())
	}
	if fi, err := os.Stat(filepath.Join(dir, "db", StateFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state file: %v, %v", fi, err)
	}

	// From the client host, over the veth: the bench user from another host, plain and
	// with TLS whose certificate names the data address.
	client := func(extra ...string) string {
		t.Helper()
		args := append([]string{"netns", "exec", p.NSA, "mariadb", "--no-defaults", "-h", c.Host, "-P", strconv.Itoa(c.Port),
			"-u", c.User, "-D", c.DB, "--batch", "--skip-column-names", "--connect-timeout=5"}, extra...)
		cmd := exec.CommandContext(ctx, "ip", args...)
		cmd.Env = append(os.Environ(), "MYSQL_PWD="+c.Password)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("mariadb client from A: %v: %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := client("--skip-ssl", "-e", "SELECT 1"); got != "1" {
		t.Errorf("SELECT 1 from A: %q", got)
	}
	tls := client("--ssl", "--ssl-ca="+filepath.Join(c.CertDir, "ca.pem"), "--ssl-verify-server-cert",
		"-e", "SHOW SESSION STATUS LIKE 'Ssl_version'")
	if !strings.Contains(tls, "TLS") {
		t.Errorf("TLS from A: %q", tls)
	}
	phase("client on A connected, plain and TLS (" + tls + ")")

	facts, err := m.Facts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if facts.Version != m.Version() || len(facts.Settings) != 4 || facts.Settings[0].Value != "YES" {
		t.Errorf("facts %+v", facts)
	}
	t.Logf("facts: %+v", facts)

	st := m.State()
	if err := m.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	phase("stopped")
	for _, pid := range []int{st.Pid, st.AgentPid} {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && !strings.Contains(string(b), ") Z ") {
			t.Errorf("pid %d still runs after Stop: %s", pid, b)
		}
	}
	left := netnsProcs(p.NSB)
	t.Logf("running in B after Stop: %q", left)
	for _, pc := range left {
		if !strings.HasSuffix(pc, " sshd") {
			t.Errorf("left running in B: %s", pc)
		}
	}
	log, _ := os.ReadFile(filepath.Join(dir, "db", AgentLog(engine.MariaDB)))
	if !strings.Contains(string(log), "stopping mariadb: signalled") {
		t.Errorf("the agent did not stop the server on SIGTERM:\n%s", log)
	}
}
