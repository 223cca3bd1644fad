package link

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wirelab/wirelab/internal/cpuidle"
	"github.com/wirelab/wirelab/internal/execx"
)

// DelayerCommand is the command line of `wirelab __delayer`, kept here (not in cli) so the
// link tests can run the very same code as a helper binary.
type DelayerCommand struct {
	queues, loss, overflow      string
	delay, jitter, maxSpin      time.Duration
	maxQueue, readyFD           int
	seed                        uint64
	statsFile, pidFile, logFile string
	detach, realtime            bool
}

// AddDelayerFlags registers the delayer's flags on fs.
func AddDelayerFlags(fs *flag.FlagSet) *DelayerCommand {
	d := &DelayerCommand{}
	fs.StringVar(&d.queues, "queue", "", "NFQUEUE numbers, comma separated, one delay line each")
	fs.DurationVar(&d.delay, "delay", 0, "one-way delay")
	fs.DurationVar(&d.jitter, "jitter", 0, "± jitter (≤ delay)")
	fs.StringVar(&d.loss, "loss", "0", "loss in percent")
	fs.IntVar(&d.maxQueue, "max-queue", 0, "packets per delay line (0 = sized for an unlimited rate)")
	fs.Uint64Var(&d.seed, "seed", 1, "seed of jitter and loss")
	fs.StringVar(&d.overflow, "overflow", "drop", "when a delay line is full: drop (tail-drop) or accept (pass undelayed); both are counted")
	fs.StringVar(&d.statsFile, "stats-file", "", "JSON counters, rewritten every second")
	fs.StringVar(&d.pidFile, "pid-file", "", "with --detach: where to write the pid")
	fs.StringVar(&d.logFile, "log-file", "", "with --detach: the daemon's stdout and stderr")
	fs.BoolVar(&d.detach, "detach", false, "start in the background; return once the queues are bound")
	fs.BoolVar(&d.realtime, "realtime", true, "run the delay loop's thread SCHED_FIFO, ahead of every ordinary task")
	fs.DurationVar(&d.maxSpin, "max-spin", maxEarly, "longest the loop spins before a release, within a budget of 2% of a CPU, instead of trusting a sleep to wake on time (0 = never spin)")
	fs.IntVar(&d.readyFD, "ready-fd", 0, "internal: file descriptor to report readiness on")
	return d
}

// Config validates the flags and returns the delayer's configuration.
func (d *DelayerCommand) Config() (DelayerConfig, error) {
	var cfg DelayerConfig
	for _, s := range strings.Split(d.queues, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 16)
		if err != nil {
			return cfg, fmt.Errorf("%w: --queue %q: want queue numbers 0-65535, comma separated", ErrBadFlag, d.queues)
		}
		cfg.Queues = append(cfg.Queues, uint16(n))
	}
	loss, err := ParseLoss(d.loss)
	if err != nil {
		return cfg, err
	}
	if err := (Condition{Delay: d.delay, Jitter: d.jitter, LossPct: loss}).Validate(); err != nil {
		return cfg, err
	}
	if d.overflow != "drop" && d.overflow != "accept" {
		return cfg, fmt.Errorf("%w: --overflow %q: want drop or accept", ErrBadFlag, d.overflow)
	}
	if d.maxSpin < 0 || d.maxSpin > time.Millisecond {
		return cfg, fmt.Errorf("%w: --max-spin %s: want a duration from 0 to 1ms", ErrBadFlag, d.maxSpin)
	}
	if d.maxQueue < 0 {
		return cfg, fmt.Errorf("%w: --max-queue %d: must not be negative", ErrBadFlag, d.maxQueue)
	}
	if d.detach && (d.pidFile == "" || d.logFile == "") {
		return cfg, fmt.Errorf("%w: --detach needs --pid-file and --log-file", ErrBadFlag)
	}
	return DelayerConfig{Queues: cfg.Queues, Delay: d.delay, Jitter: d.jitter, LossPct: loss,
		MaxQueue: d.maxQueue, Seed: d.seed, Overflow: d.overflow, StatsFile: d.statsFile,
		Realtime: d.realtime, MaxSpin: d.maxSpin}, nil
}

// Run runs the parsed command: detached (self is the wirelab binary, args the command's
// arguments) or in the foreground until ctx is done.
func (d *DelayerCommand) Run(ctx context.Context, self string, args []string, stdout io.Writer, log *slog.Logger) error {
	cfg, err := d.Config()
	if err != nil {
		return err
	}
	if d.detach {
		pid, err := startDetached(self, args, d.pidFile, d.logFile)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "pid %d\n", pid)
		return nil
	}
	cfg.Logger = log
	cfg.CPUIdle = &cpuidle.System
	// One thread delays; one P more lets the stats writer run without taking the loop's.
	runtime.GOMAXPROCS(2)
	ready := func() {
		if d.readyFD > 0 {
			f := os.NewFile(uintptr(d.readyFD), "ready")
			fmt.Fprintln(f, "ready")
			f.Close()
		}
	}
	return RunDelayer(ctx, cfg, ready)
}

// startDetached re-runs the delayer without --detach in its own session, stdout and stderr
// to logFile, and waits until it reports its queues bound (or dies: its log then says why).
func startDetached(self string, args []string, pidFile, logFile string) (int, error) {
	logf, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, fmt.Errorf("delayer log: %w", err)
	}
	defer logf.Close()
	rd, wr, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("delayer ready pipe: %w", err)
	}
	defer rd.Close()
	child := []string{"__delayer", "--ready-fd", "3"}
	for _, a := range args {
		if a != "--detach" && a != "-detach" {
			child = append(child, a)
		}
	}
	cmd := exec.Command(self, child...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{wr}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		wr.Close()
		return 0, fmt.Errorf("start delayer: %w", err)
	}
	wr.Close() // the child holds the only write end: EOF means it died before binding
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(rd).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	var got string
	select {
	case got = <-line:
	case <-time.After(10 * time.Second):
	}
	if got != "ready" {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		tail, _ := os.ReadFile(logFile)
		return 0, fmt.Errorf("delayer did not start: %s", tailOrNone(string(tail)))
	}
	pid := cmd.Process.Pid
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		return 0, fmt.Errorf("delayer pid file: %w", err)
	}
	_ = cmd.Process.Release()
	return pid, nil
}

// tailOrNone is the delayer log's last lines, or says it wrote none.
func tailOrNone(log string) string {
	if t := execx.LastLines(log, 5, " | "); t != "" {
		return t
	}
	return "no log output"
}
