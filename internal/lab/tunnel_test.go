package lab

import (
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/tunnel"
)

func TestTunnelEnds(t *testing.T) {
	exit, _ := TunnelEnds("/c", HostAddr[Server], TunnelOptions{Knobs: tunnel.Knobs{Compress: tunnel.Zstd, Level: 3, Mux: tunnel.MuxOn, GroupTimeout: 50 * time.Millisecond}})
	want := "/wl tunnel exit --listen 198.18.0.2:4406 --to 127.0.0.1:3306 --tls-cert /c/exit.pem --tls-key /c/exit-key.pem --tls-ca /c/ca.pem --stats --stats-every 10s --compress zstd --level 3 --group-timeout 50ms --drain-timeout 0s"
	if got := strings.Join(exit.Config.Argv("/wl"), " "); got != want {
		t.Fatalf("exit argv\n got %s\nwant %s", got, want)
	}
	if exit.Name != "tunnel-exit" || exit.Port != TunnelExitPort || strings.Join(exit.Certs, " ") != "ca.pem exit.pem exit-key.pem" {
		t.Errorf("exit end %+v", exit)
	}
	exit, entry := TunnelEnds("/c", HostAddr[Server], TunnelOptions{Knobs: tunnel.Knobs{GroupMaxSize: 256 << 10, Mux: tunnel.MuxOff, Window: 32 << 20, Binlog: tunnel.BinlogRaw}})
	// Both ends take the window: a receiver refuses a zstd stream declaring more than its own.
	if got := strings.Join(exit.Config.Args(), " "); !strings.Contains(got, "--window 32MiB") {
		t.Errorf("exit args %s: no --window 32MiB, the entry's", got)
	}
	want = "/wl tunnel entry --listen 127.0.0.1:3307 --to 198.18.0.2:4406 --tls-cert /c/entry.pem --tls-key /c/entry-key.pem --tls-ca /c/ca.pem --stats --stats-every 10s --mux off --window 32MiB --group-max-size 256KiB --drain-timeout 0s"
	if got := strings.Join(entry.Config.Argv("/wl"), " "); got != want {
		t.Fatalf("entry argv\n got %s\nwant %s", got, want)
	}
	if entry.Name != "tunnel-entry" || entry.Port != TunnelEntryPort {
		t.Errorf("entry end %+v", entry)
	}
}

// With an existing server the exit, in the server host, forwards on to the server's address.
func TestTunnelEndsToAnExistingServer(t *testing.T) {
	exit, _ := TunnelEnds("/c", HostAddr[Server], TunnelOptions{ServerHost: "198.18.250.1", ServerPort: 3307})
	if got := strings.Join(exit.Config.Args(), " "); !strings.Contains(got, "--to 198.18.250.1:3307") {
		t.Errorf("exit args %s", got)
	}
}
