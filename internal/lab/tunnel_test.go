package lab

import (
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/tunnel"
)

func TestTunnelArgv(t *testing.T) {
	exit := strings.Join(TunnelArgv("/wl", tunnel.Exit, "/c", TunnelOptions{Knobs: tunnel.Knobs{Compress: tunnel.Zstd, Level: 3, Mux: tunnel.MuxOn, GroupTimeout: 50 * time.Millisecond}}), " ")
	want := "/wl tunnel exit --listen 198.18.0.2:4406 --to 127.0.0.1:3306 --tls-cert /c/exit.pem --tls-key /c/exit-key.pem --tls-ca /c/ca.pem --stats --stats-every 10s --compress zstd --level 3 --group-timeout 50ms"
	if exit != want {
		t.Fatalf("exit argv\n got %s\nwant %s", exit, want)
	}
	entry := strings.Join(TunnelArgv("/wl", tunnel.Entry, "/c", TunnelOptions{Knobs: tunnel.Knobs{GroupMaxSize: 256 << 10, Mux: tunnel.MuxOn, Window: 32 << 20}}), " ")
	want = "/wl tunnel entry --listen 127.0.0.1:3307 --to 198.18.0.2:4406 --tls-cert /c/entry.pem --tls-key /c/entry-key.pem --tls-ca /c/ca.pem --stats --stats-every 10s --mux on --window 32MiB --group-max-size 256KiB"
	if entry != want {
		t.Fatalf("entry argv\n got %s\nwant %s", entry, want)
	}
}

// With an existing server the exit, in the server host, forwards on to the server's address.
func TestTunnelArgvToAnExistingServer(t *testing.T) {
	exit := strings.Join(TunnelArgv("/wl", tunnel.Exit, "/c", TunnelOptions{ServerHost: "198.18.250.1", ServerPort: 3307}), " ")
	if !strings.Contains(exit, "--to 198.18.250.1:3307") {
		t.Errorf("exit argv %s", exit)
	}
}
