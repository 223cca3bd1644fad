package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/hosts"
	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/remote"
)

// Every agent command line another package renders reaches its tool here and parses:
// the tool's name and every flag are ones `wirelab agent` knows. (Each package's own
// round-trip test checks the values; --help stops before the command runs.)
func TestAgentArgvsParse(t *testing.T) {
	class, _ := metrics.ParseTCClass("eth0:1:1")
	argvs := [][]string{
		metrics.SampleCommand{Every: time.Second, For: time.Hour, UpClass: class, DownClass: class,
			UpIface: "eth0", Comms: []string{"mariadbd"}, PIDs: []int{1}, Trees: []int{2}}.Argv("wirelab"),
		hosts.DeadmanCommand{TTL: time.Minute, Renew: "/r", Undo: "/u", DelayerPid: "/p"}.Argv("wirelab"),
		remote.ServerOptions{Engine: engine.MariaDB, Agent: "wirelab", Dir: "/d", Bind: "198.18.0.2", Port: 3306,
			BufferPool: "1G", ServerID: 1, LogBin: true, Extra: map[string]string{"a": "b"}, For: time.Hour}.AgentArgv(),
		remote.ServerOptions{Engine: engine.Postgres, Agent: "wirelab", Dir: "/d", Bind: "198.18.0.2", Port: 15432, For: time.Hour}.AgentArgv(),
	}
	for _, argv := range argvs {
		p, _, errb, _ := testProcess(t, true)
		if code := Main(append(argv[1:], "--help"), p); code != 0 || !strings.Contains(errb.String(), "Example") {
			t.Errorf("%q: exit %d, %s", argv, code, errb.String())
		}
	}
}
