package replication

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/tunnel"
)

func TestParseChannels(t *testing.T) {
	got, err := ParseChannels(" tunnel, native ")
	if err != nil || !slices.Equal(got, []Channel{Native, Tunnel}) {
		t.Fatalf("got %v, %v; want native first", got, err)
	}
	for _, bad := range []string{"", ",", "native,native", "native,pigeon"} {
		if _, err := ParseChannels(bad); err == nil || !strings.Contains(err.Error(), "--channels") {
			t.Errorf("ParseChannels(%q) = %v, want an error naming --channels", bad, err)
		}
	}
}

func TestTunnelArgv(t *testing.T) {
	exit := strings.Join(TunnelArgv("/wl", tunnel.Exit, "/c", "zstd", 3, 50*time.Millisecond), " ")
	want := "/wl tunnel exit --listen 198.18.0.2:4406 --to 198.18.0.2:3306 --tls-cert /c/exit.pem --tls-key /c/exit-key.pem --tls-ca /c/ca.pem --compress zstd --level 3 --group-timeout 50ms"
	if exit != want {
		t.Fatalf("exit argv\n got %s\nwant %s", exit, want)
	}
	entry := strings.Join(TunnelArgv("/wl", tunnel.Entry, "/c", "", 0, 0), " ")
	want = "/wl tunnel entry --listen 127.0.0.1:3307 --to 198.18.0.2:4406 --tls-cert /c/entry.pem --tls-key /c/entry-key.pem --tls-ca /c/ca.pem"
	if entry != want {
		t.Fatalf("entry argv\n got %s\nwant %s", entry, want)
	}
}

func TestEndpoint(t *testing.T) {
	tests := []struct {
		ch   Channel
		host string
		port int
		comp bool
	}{
		{Native, "198.18.0.2", 3306, false},
		{NativeCompressed, "198.18.0.2", 3306, true},
		{Tunnel, "127.0.0.1", TunnelEntryPort, false},
	}
	for _, tc := range tests {
		h, p, c := endpoint(tc.ch)
		if h != tc.host || p != tc.port || c != tc.comp {
			t.Errorf("endpoint(%s) = %s:%d %v", tc.ch, h, p, c)
		}
	}
}

func TestDropRules(t *testing.T) {
	r := dropRules("to-replica")
	if len(r) != 2 || r[0][0] != "-i" || r[1][0] != "-o" || r[0][1] != "to-replica" || r[1][len(r[1])-1] != "DROP" {
		t.Fatalf("rules %v", r)
	}
}
