package e2e

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/nstest"
	"github.com/wirelab/wirelab/internal/result"
)

// BenchmarkSSHTwoClients loads one server over SSH from one client host and from two,
// alternating (one, two, one, two: sshVsLabRounds), with the same threads and a 20 mbit
// link per client, and prints each point's merged TPS side by side. Each client host has a
// link of its own, so where one client's link is full two clients carry twice its
// transactions: the goal is two ÷ one within 10% of 2.0 at the link-bound points (the
// ones whose single-client run has link utilisation ≥ 0.9). The other points are shown,
// not judged: the three hosts share this machine's two cores. `make bench-ssh`.
func BenchmarkSSHTwoClients(b *testing.B) {
	skipUnlessRoot(b)
	nstest.SkipUnlessSSHD(b)
	s := nstest.NewSSHStar(b, "198.18.31.1", "198.18.31.11", "198.18.31.12")
	inventory := func(clients int) string {
		inv := fmt.Sprintf("known_hosts: %s\ndefaults: {user: root, port: 22, key: %s}\nhosts:\n", s.KnownHosts, s.Key)
		for i := 0; i < clients; i++ {
			inv += fmt.Sprintf("  - {name: app%d, role: client, address: %s, nic: %s}\n", i+1, s.ClientAddr[i], nstest.ClientNIC(i))
		}
		inv += fmt.Sprintf("  - {name: db, role: server, address: %s, server: {start: mariadb}}\n", s.ServerAddr)
		file := filepath.Join(s.Dir, fmt.Sprintf("hosts-%d.yaml", clients))
		if err := os.WriteFile(file, []byte(inv), 0o600); err != nil {
			b.Fatal(err)
		}
		return file
	}
	files := map[int]string{1: inventory(1), 2: inventory(2)}
	state := b.TempDir()
	wl := func(args ...string) *exec.Cmd { // wirelab on the first client host
		cmd := exec.Command("ip", append([]string{"netns", "exec", s.ClientNS[0], bin}, args...)...)
		cmd.Env = append(os.Environ(), "WIRELAB_STATE_DIR="+state)
		return cmd
	}
	b.Cleanup(func() { _ = wl("down", "--hosts", files[2]).Run() })
	runs := map[int][][]result.Point{}
	for i := 0; i < sshVsLabRounds; i++ {
		for _, n := range []int{1, 2} {
			out := b.TempDir()
			load, start := loadavg(), time.Now()
			combined, err := wl("run", "--hosts", files[n], "--rate", "20mbit", "--threads", "2,8,32",
				"--duration", "10s", "--warmup", "2s", "--out", out).CombinedOutput()
			if err != nil {
				b.Fatalf("%d client(s): %v\n%s", n, err, combined)
			}
			fmt.Printf("round %d, %d client(s): %s, load %s -> %s\n", i+1, n, time.Since(start).Round(time.Second), load, loadavg())
			runs[n] = append(runs[n], readRun(b, out).Points)
		}
	}
	worst := 0.0
	fmt.Println("| threads | one client TPS | two clients TPS | two ÷ one | one client's link utilisation (mean) |")
	fmt.Println("|---:|---|---|---:|---|")
	for _, k := range pointKeys(runs[1][0]) {
		var one, two, util []float64
		for i := range runs[1] {
			one, two = append(one, tpsOf(runs[1][i], k)), append(two, tpsOf(runs[2][i], k))
			for _, p := range runs[1][i] {
				if p.Series == k.series && p.Threads == k.threads {
					util = append(util, p.LinkUtilization)
				}
			}
		}
		r := mean(two) / mean(one)
		judged := ""
		if mean(util) >= 0.9 {
			worst = max(worst, math.Abs(r/2-1))
			judged = " (judged)"
		}
		fmt.Printf("| %d | %s | %s | %.3f%s | %.2f |\n", k.threads, join(one), join(two), r, judged, mean(util))
	}
	fmt.Printf("link-bound points: worst |two ÷ one ÷ 2 - 1| = %.1f%% (goal: within 10%%)\n", 100*worst)
	b.ReportMetric(100*worst, "worst-dev-%")
}
