package cli

import (
	"runtime"
	"testing"

	"github.com/wirelab/wirelab/internal/hostinfo"
)

func TestAgentFacts(t *testing.T) {
	p, out, _, _ := testProcess(t, false)
	p.ProcRoot = "../hostinfo/testdata/xeon48/proc"
	if code := Main([]string{"agent", "facts"}, p); code != 0 {
		t.Fatalf("agent facts: exit %d", code)
	}
	h, err := hostinfo.Parse(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	// The cores are the agent's own (its scheduler affinity), the rest the host's files.
	if h.Cores != runtime.NumCPU() || h.Kernel != "6.1.0-28-amd64" || h.CPUModel != "Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz" {
		t.Errorf("agent facts = %+v", h)
	}
}
