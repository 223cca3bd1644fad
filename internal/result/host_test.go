package result

import "testing"

// The replication study's replica host is its client side: its cores weigh the replica's
// CPU as a client host's weigh sysbench's.
func TestHostCoresReplicaIsTheClientSide(t *testing.T) {
	for _, far := range []string{"client", "replica"} {
		got := HostCores([]Host{{Role: far, Cores: 4}, {Role: "server", Cores: 16}})
		if got.Client != 4 || got.Server != 16 || got.Shared != 0 {
			t.Errorf("%s + server: %+v, want client 4, server 16", far, got)
		}
	}
	if got := HostCores([]Host{{Role: SharedRole, Cores: 2}}); got.Shared != 2 {
		t.Errorf("the lab's one machine: %+v, want shared 2", got)
	}
}
