package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/result"
)

// BenchmarkSSHvsLab runs the quick bandwidth study over SSH between two sshd hosts and in
// the namespace lab, alternating (SSH, lab, SSH, lab: sshVsLabRounds), and prints each
// point's TPS side by side. The goal: on the shaped (slow) link every point agrees within
// 10%. The unlimited link's points are CPU-bound and the two topologies differ there (the
// lab forwards through a wire host; the SSH hosts share one veth), so they are shown, not
// judged. `make bench-ssh`.
func BenchmarkSSHvsLab(b *testing.B) {
	p, inv := sshHosts(b, "198.18.14.1", "198.18.14.2")
	args := []string{"study", "bandwidth", "--quick"}
	var ssh, lab [][]result.Point
	for i := 0; i < sshVsLabRounds; i++ {
		for _, where := range []string{"ssh", "lab"} {
			out := b.TempDir()
			load := loadavg()
			start := time.Now()
			var err error
			var combined []byte
			if where == "ssh" {
				combined, err = inClient(p, b.TempDir(), append(args, "--hosts", inv, "--out", out)...).CombinedOutput()
			} else {
				cmd := exec.Command(bin, append(args, "--out", out)...)
				cmd.Env = append(os.Environ(), "WIRELAB_STATE_DIR="+b.TempDir())
				combined, err = cmd.CombinedOutput()
			}
			if err != nil {
				b.Fatalf("%s: %v\n%s", where, err, combined)
			}
			run := readRun(b, out)
			fmt.Printf("round %d %s: %s, load %s -> %s\n", i+1, where, time.Since(start).Round(time.Second), load, loadavg())
			if where == "ssh" {
				ssh = append(ssh, run.Points)
			} else {
				lab = append(lab, run.Points)
			}
		}
	}
	worst := 0.0
	fmt.Println("| series | threads | SSH TPS | lab TPS | SSH ÷ lab |")
	fmt.Println("|---|---:|---|---|---:|")
	for _, k := range pointKeys(ssh[0]) {
		var s, l []float64
		for i := range ssh {
			s, l = append(s, tpsOf(ssh[i], k)), append(l, tpsOf(lab[i], k))
		}
		r := mean(s) / mean(l)
		if strings.HasPrefix(k.series, "20mbit") {
			worst = math.Max(worst, math.Abs(r-1))
		}
		fmt.Printf("| %s | %d | %s | %s | %.3f |\n", k.series, k.threads, join(s), join(l), r)
	}
	fmt.Printf("slow link: worst |SSH ÷ lab - 1| = %.1f%% (goal: within 10%%)\n", 100*worst)
	b.ReportMetric(100*worst, "worst-dev-%")
}

// sshVsLabRounds is how many SSH + lab pairs one benchmark run measures, whatever b.N is
// (run it with -benchtime 1x: each round is two studies of a few minutes).
const sshVsLabRounds = 2

type pointKey struct {
	series  string
	threads int
}

func pointKeys(ps []result.Point) []pointKey {
	var out []pointKey
	for _, p := range ps {
		out = append(out, pointKey{p.Series, p.Threads})
	}
	return out
}

func tpsOf(ps []result.Point, k pointKey) float64 {
	for _, p := range ps {
		if p.Series == k.series && p.Threads == k.threads {
			return p.TPS
		}
	}
	return math.NaN()
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func join(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf("%.1f", x)
	}
	return strings.Join(s, " / ")
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func readRun(tb testing.TB, dir string) result.Run {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var run result.Run
	if err := json.Unmarshal(data, &run); err != nil {
		tb.Fatal(err)
	}
	return run
}
