package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/replication"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/tunnel"
)

// link20ms is a 20 ms round trip, 10 ms each way.
var link20ms = link.Condition{Delay: 10 * time.Millisecond}

// The four faults a tunnel between two data centres must survive, each under a write load
// replicated through the tunnel at 20 ms: nothing lost or applied twice (the replica caught
// up by itself and every table's checksum equals the source's), lag back under 1 s within
// 60 s of the fault's end, nothing left. About 1.5 min each: they run in `make
// bench-tunnel-faults` (WIRELAB_TUNNEL_FAULTS=1), not in every `make test`.

func TestTunnelFaultWANDrop30s(t *testing.T) {
	tunnelFault(t, 40*time.Second, func(*labRun) replication.Fault {
		return replication.Fault{At: 5 * time.Second, For: 30 * time.Second}
	})
}

func TestTunnelFaultExitKilled(t *testing.T) {
	tunnelFault(t, 15*time.Second, func(r *labRun) replication.Fault { return killAndRestart(r, tunnel.Exit) })
}

func TestTunnelFaultEntryKilled(t *testing.T) {
	tunnelFault(t, 15*time.Second, func(r *labRun) replication.Fault { return killAndRestart(r, tunnel.Entry) })
}

func TestTunnelFaultCertReload(t *testing.T) {
	tunnelFault(t, 12*time.Second, func(r *labRun) replication.Fault {
		return replication.Fault{At: 5 * time.Second, For: 2 * time.Second, Inject: func(context.Context) (func() error, error) { return reloadCerts(r.lab) },
			What: "new certificates (a new CA) were written and both tunnel ends reloaded them on SIGHUP"}
	})
}

// tunnelFault runs the replication study's fault scenario through the tunnel with the
// fault fault makes (its steps act on the run's lab) and checks the point.
func tunnelFault(t *testing.T, load time.Duration, fault func(*labRun) replication.Fault) {
	skipUnlessRoot(t)
	if os.Getenv("WIRELAB_TUNNEL_FAULTS") == "" {
		t.Skip("WIRELAB_TUNNEL_FAULTS unset: `make bench-tunnel-faults` runs the tunnel's fault tests")
	}
	r := &labRun{t: t}
	f := fault(r)
	o := tunnelReplicationOptions()
	o.Scenarios, o.Link, o.Duration, o.Fault = []int{4}, link20ms, load, f
	start := time.Now()
	run := r.run(replication.New(o))
	if len(run.Points) != 1 {
		t.Fatalf("%d points, want 1", len(run.Points))
	}
	p := run.Points[0]
	if !p.Usable() {
		t.Fatalf("failed=%v checksum_ok=%v: %s", p.Failed, p.Replication.ChecksumOK, p.FailReason)
	}
	back, ok := lagBackUnder(p, time.Second, f.At+f.For)
	if !ok || back > 60*time.Second {
		t.Errorf("lag not back under 1 s within 60 s of the fault's end (%v after %v); lag by second:%s", ok, back, lagSeries(p))
	}
	t.Logf("%s: lag back under 1 s %.0f s after the fault ended (lag max %.1f s, catch-up %.1f s, checksums equal); test took %s",
		t.Name(), back.Seconds(), p.Replication.LagMaxS, p.Replication.CatchUpS, time.Since(start).Round(time.Second))
}

// lagBackUnder is how long after end (since the point's start) the replica's lag was first
// under limit: a second of the point's series, or the end of its catch-up (the replica then
// has applied everything: no lag), whichever comes first.
func lagBackUnder(p result.Point, limit, end time.Duration) (time.Duration, bool) {
	rs := p.Replication
	caughtUp := time.Duration((rs.LoadS + rs.CatchUpS) * float64(time.Second))
	for _, s := range p.Seconds {
		at := time.Duration(s.T * float64(time.Second))
		if at >= end && at < caughtUp && s.Lag < limit.Seconds() {
			return at - end, true
		}
	}
	return max(caughtUp-end, 0), rs.ChecksumOK
}

// lagSeries is the point's per-second lag, for a failure's message.
func lagSeries(p result.Point) string {
	var b strings.Builder
	for _, s := range p.Seconds {
		fmt.Fprintf(&b, " %.0f:%.1f", s.T, s.Lag)
	}
	return b.String()
}

// killAndRestart kills a tunnel end with SIGKILL 5 s into the load and starts it again, as
// the lab started it, 5 s later.
func killAndRestart(r *labRun, role tunnel.Role) replication.Fault {
	return replication.Fault{At: 5 * time.Second, For: 5 * time.Second,
		What: fmt.Sprintf("the tunnel %s was killed (SIGKILL) and started again 5 s later", role),
		Inject: func(ctx context.Context) (func() error, error) {
			l, name := r.lab, "tunnel-"+string(role)
			host := map[tunnel.Role]string{tunnel.Exit: lab.Server, tunnel.Entry: lab.Replica}[role]
			pid, argv, err := endProc(l, name)
			if err != nil {
				return nil, err
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				return nil, fmt.Errorf("kill %s: %w", name, err)
			}
			if err := l.StopProc(name); err != nil { // waits until it is gone, forgets it
				return nil, err
			}
			return func() error {
				if _, err := l.StartProc(host, name, argv, nil); err != nil {
					return err
				}
				port := map[tunnel.Role]int{tunnel.Exit: lab.TunnelExitPort, tunnel.Entry: lab.TunnelEntryPort}[role]
				return waitListening(ctx, l, host, port)
			}, nil
		}}
}

// endProc is the pid and command line of the lab's helper name.
func endProc(l *lab.Lab, name string) (int, []string, error) {
	for _, p := range l.State.Procs {
		if p.Name == name {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.Pid))
			if err != nil {
				return 0, nil, err
			}
			// `ip netns exec NS argv...` became argv by exec: the command line is the end's.
			return p.Pid, strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00"), nil
		}
	}
	return 0, nil, fmt.Errorf("lab has no %s", name)
}

// waitListening waits until something listens on port in host.
func waitListening(ctx context.Context, l *lab.Lab, host string, port int) error {
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if out, err := l.Exec(ctx, host, lab.ListenCheck(port)...); err == nil && len(bytes.TrimSpace(out)) > 0 {
			return nil
		}
	}
	return fmt.Errorf("nothing listens on :%d in %s after 15s", port, host)
}

// reloadCerts writes new certificates where the lab's ends read theirs and sends both
// SIGHUP, the exit first; the end checks that both logged the reload.
func reloadCerts(l *lab.Lab) (func() error, error) {
	if err := tunnel.GenerateCerts(filepath.Join(l.State.TempDir, "tunnel-certs"), []string{lab.HostAddr[lab.Server]}); err != nil {
		return nil, err
	}
	for _, name := range []string{"tunnel-exit", "tunnel-entry"} {
		pid, _, err := endProc(l, name)
		if err != nil {
			return nil, err
		}
		if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
			return nil, fmt.Errorf("SIGHUP %s: %w", name, err)
		}
	}
	return func() error {
		for _, name := range []string{"tunnel-exit", "tunnel-entry"} {
			b, err := os.ReadFile(filepath.Join(l.State.TempDir, name+".log"))
			if err != nil {
				return err
			}
			if !bytes.Contains(b, []byte("tls reloaded")) {
				return fmt.Errorf("%s did not log its reload:\n%s", name, b)
			}
		}
		return nil
	}, nil
}
