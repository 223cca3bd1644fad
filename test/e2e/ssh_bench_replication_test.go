package e2e

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/result"
)

// BenchmarkSSHReplicationVsLab runs the replication study's bandwidth scenario (wire
// bytes by load, native and tunnel channels) between two sshd hosts over --hosts and in
// the namespace lab with the same flags, alternating (SSH, lab, SSH, lab:
// sshVsLabRounds), and prints the tunnel's wire bytes ÷ native's at each load side by
// side. The goal: over SSH within 10% of the lab at every load. `make bench-ssh`.
func BenchmarkSSHReplicationVsLab(b *testing.B) {
	p, inv := replicaHosts(b, "198.18.33.1", "198.18.33.2")
	args := []string{"study", "replication", "--rtt", "20ms", "--tables", "1", "--table-size", "10000", "--buffer-pool", "128M",
		"--channels", "native,tunnel", "--scenarios", "3", "--loads", "300,1200", "--duration", "15s"}
	ratios := map[string][]map[float64]float64{}
	for i := 0; i < sshVsLabRounds; i++ {
		for _, where := range []string{"ssh", "lab"} {
			out := b.TempDir()
			load, start := loadavg(), time.Now()
			var cmd *exec.Cmd
			if where == "ssh" {
				cmd = inClient(p, b.TempDir(), append(args, "--hosts", inv, "--out", out)...)
			} else {
				cmd = exec.Command(bin, append(args, "--out", out)...)
				cmd.Env = append(os.Environ(), "WIRELAB_STATE_DIR="+b.TempDir())
			}
			if combined, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%s: %v\n%s", where, err, combined)
			}
			run := readRun(b, out)
			for _, pt := range run.Points {
				if pt.Failed || pt.Replication == nil || !pt.Replication.ChecksumOK {
					b.Fatalf("%s: point %s %s at %.0f QPS failed or its checksums differ: %s", where, pt.Series, pt.Channel, targetQPS(pt), pt.FailReason)
				}
			}
			r := map[float64]float64{}
			for _, w := range result.WireVsNative(run.Points, result.MarginOf(&run).Stats()) {
				r[w.Load] = w.Ratio.Ratio
			}
			ratios[where] = append(ratios[where], r)
			fmt.Printf("round %d %s: %s, load %s -> %s\n", i+1, where, time.Since(start).Round(time.Second), load, loadavg())
		}
	}
	worst := 0.0
	fmt.Println("| load QPS | tunnel ÷ native over SSH | in the lab | SSH ÷ lab |")
	fmt.Println("|---:|---|---|---:|")
	for _, load := range []float64{300, 1200} {
		var s, l []float64
		for i := range ratios["ssh"] {
			s, l = append(s, ratios["ssh"][i][load]), append(l, ratios["lab"][i][load])
		}
		r := mean(s) / mean(l)
		worst = math.Max(worst, math.Abs(r-1))
		fmt.Printf("| %.0f | %s | %s | %.3f |\n", load, joinRatios(s), joinRatios(l), r)
	}
	fmt.Printf("tunnel ÷ native wire bytes: worst |SSH ÷ lab - 1| = %.1f%% (goal: within 10%%)\n", 100*worst)
	b.ReportMetric(100*worst, "worst-dev-%")
}

func targetQPS(p result.Point) float64 {
	if p.Replication == nil {
		return 0
	}
	return p.Replication.TargetQPS
}

func joinRatios(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf("%.3f", x)
	}
	return strings.Join(s, " / ")
}
