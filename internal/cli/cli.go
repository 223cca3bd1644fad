package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"reflect"
	"sort"
	"strings"
	"syscall"

	"github.com/wirelab/wirelab/internal/cpuidle"
	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/flagx"
	"github.com/wirelab/wirelab/internal/procfs"
)

// Process is the process state handed to every command, so commands run in memory in tests
// (k6's cmd/state). Interrupts delivers each Ctrl-C/SIGTERM; nil means none will come.
type Process struct {
	Stdout, Stderr io.Writer
	Stdin          io.Reader
	Getenv         func(string) string
	Runner         execx.Runner
	Logger         *slog.Logger
	Interrupts     <-chan os.Signal
	Self           string // path of the wirelab binary, for helpers started inside a host
	StateDir       string // where lab state files live (/run/wirelab)
	LockDir        string // the machine's measurement lock (/run/wirelab, whatever StateDir is)
	DataDir        string // what outlives a boot: the calibrated margin (/var/lib/wirelab); "" = none
	ProcRoot       string // this machine's /proc ("" = procfs.DefaultRoot): every /proc read starts here
	IsRoot         func() bool
	CPUIdle        cpuidle.Paths // PM QoS device and cpuidle sysfs
	// Hangups subscribes a command that reloads on SIGHUP (a tunnel end) to it: the
	// channel, and a function that ends the subscription. Nil: no SIGHUP comes.
	Hangups func() (<-chan os.Signal, func())
}

// notifyHangups subscribes to SIGHUP; only the commands that ask catch it.
func notifyHangups() (<-chan os.Signal, func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGHUP)
	return c, func() { signal.Stop(c) }
}

// NewProcess is the real process: os streams, signals, the OS runner.
func NewProcess() *Process {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	// A closed stdout or stderr pipe (`wirelab run | head -1`) must not kill wirelab with
	// SIGPIPE in the middle of a run and leave the lab behind: writes fail instead, the run
	// goes on and tears down as usual.
	signal.Ignore(syscall.SIGPIPE)
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0]
	}
	level := slog.LevelInfo
	if os.Getenv("WIRELAB_DEBUG") != "" {
		level = slog.LevelDebug
	}
	p := &Process{
		Stdout: os.Stdout, Stderr: os.Stderr, Stdin: os.Stdin, Getenv: os.Getenv,
		Runner:     execx.OS{},
		Logger:     slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
		Interrupts: sig, Self: self, StateDir: "/run/wirelab", LockDir: "/run/wirelab", DataDir: "/var/lib/wirelab", ProcRoot: procfs.DefaultRoot,
		IsRoot: func() bool { return os.Geteuid() == 0 }, CPUIdle: cpuidle.System, Hangups: notifyHangups,
	}
	if d := os.Getenv("WIRELAB_STATE_DIR"); d != "" { // tests and bench scripts: private labs
		p.StateDir = d
	}
	if d := os.Getenv("WIRELAB_LOCK_DIR"); d != "" { // a separate machine, e.g. a container
		p.LockDir = d
	}
	if d := os.Getenv("WIRELAB_DATA_DIR"); d != "" { // tests: a private calibration
		p.DataDir = d
	}
	return p
}

// lockDir is where the machine's measurement lock lives: LockDir, or the state dir for a
// process built without one (tests in memory).
func (p *Process) lockDir() string {
	if p.LockDir != "" {
		return p.LockDir
	}
	return p.StateDir
}

// command is one subcommand; run receives the arguments after the subcommand's name.
type command struct {
	summary string
	run     func(p *Process, args []string) error
	hidden  bool
}

// commands is the explicit registry of subcommands.
func commands() map[string]command {
	return map[string]command{
		"up":        {summary: "build the lab: client, wire and server hosts, MariaDB on the server", run: cmdUp},
		"exec":      {summary: "run a command inside a lab host, with WIRELAB_* set", run: cmdExec},
		"status":    {summary: "show the lab: hosts, addresses, link, server DSN", run: cmdStatus},
		"down":      {summary: "remove everything a lab made (also after kill -9)", run: cmdDown},
		"run":       {summary: "up + one series over thread counts + down, with a report", run: cmdRun},
		"study":     {summary: "run a study: bandwidth, transport, replication, sync", run: cmdStudy},
		"replay":    {summary: "replay a captured query log across the wire (a sweep of links and series), with a report", run: cmdReplay},
		"link":      {summary: "change (set) or measure (check) the wire of a running lab", run: cmdLink},
		"tunnel":    {summary: "WAN channel: entry, exit, certs", run: cmdTunnel},
		"report":    {summary: "re-render a report from results.json", run: cmdReport},
		"compare":   {summary: "set result directories side by side: TPS per point, the change, whether it is significant", run: cmdCompare},
		"predict":   {summary: "predict TPS, latency and bottleneck on other links and machines from a run", run: cmdPredict},
		"doctor":    {summary: "check this machine: root, packages, kernel features", run: cmdDoctor},
		"calibrate": {summary: "measure this machine's run-to-run spread: the margin reports judge differences with", run: cmdCalibrate},
		"agent":     {summary: "internal: helpers wirelab runs on remote hosts (deadman, sample, mariadb)", run: cmdAgent, hidden: true},
		"__delayer": {summary: "internal: the NFQUEUE delayer inside the wire host", run: cmdDelayer, hidden: true},
		"__replay":  {summary: "internal: the query-log replayer inside the client host", run: cmdReplayChild, hidden: true},
	}
}

// UsageError is a bad invocation: exit code 2 and the command's usage hint. A package
// that checks flags says the same with flagx.UsageError, which Main treats alike.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, a ...any) error { return &UsageError{fmt.Errorf(format, a...)} }

// isUsage says whether err is a bad invocation, the command's or a package's.
func isUsage(err error) bool {
	var ue *UsageError
	var fe *flagx.UsageError
	return errors.As(err, &ue) || errors.As(err, &fe)
}

// Main runs wirelab with args and returns the exit code.
func Main(args []string, p *Process) int {
	if err := run(args, p); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		var xe *ExitError
		if errors.As(err, &xe) {
			return xe.Code
		}
		fmt.Fprintf(p.Stderr, "wirelab: %v\n", err)
		if isUsage(err) {
			return 2
		}
		return 1
	}
	return 0
}

func run(args []string, p *Process) error {
	cmds := commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(p.Stdout, cmds)
		return nil
	}
	c, ok := cmds[args[0]]
	if !ok {
		usage(p.Stderr, cmds)
		return usagef("unknown command %q", args[0])
	}
	return c.run(p, args[1:])
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "wirelab: how the network shapes MySQL/MariaDB performance\n\nUsage: wirelab <command> [flags]\n\nCommands:")
	names := make([]string, 0, len(cmds))
	for n, c := range cmds {
		if !c.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'wirelab <command> --help' for flags and an example.")
}

// newFlagSet makes a flag set whose --help prints the summary, an example and the flags.
func newFlagSet(p *Process, name, summary, example string) *flag.FlagSet {
	fs := flag.NewFlagSet("wirelab "+name, flag.ContinueOnError)
	fs.SetOutput(p.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(p.Stderr, "wirelab %s: %s\n\nExample:\n  %s\n", name, summary,
			strings.ReplaceAll(strings.TrimSpace(example), "\n", "\n  "))
		printFlags(p.Stderr, fs)
	}
	return fs
}

// printFlags lists fs's flags under "Flags:" the way the README and examples spell them,
// "--name": the name and its type hint, then the usage and any non-zero default on an
// indented line. It is flag.PrintDefaults with two dashes (Go's flag package accepts both);
// a command without flags prints nothing.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintln(w, "\nFlags:")
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if typ != "" {
			line += " " + typ
		}
		line += "\n    \t" + strings.ReplaceAll(usage, "\n", "\n    \t")
		if !isZeroDefault(f) {
			if g, ok := f.Value.(flag.Getter); ok {
				if _, isString := g.Get().(string); isString {
					line += fmt.Sprintf(" (default %q)", f.DefValue)
					fmt.Fprintln(w, line)
					return
				}
			}
			line += fmt.Sprintf(" (default %v)", f.DefValue)
		}
		fmt.Fprintln(w, line)
	})
}

// isZeroDefault reports whether f's default is its type's zero value, which help leaves
// out as flag.PrintDefaults does ("false", "0", "").
func isZeroDefault(f *flag.Flag) (zero bool) {
	t := reflect.TypeOf(f.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	v, ok := z.Interface().(flag.Value)
	if !ok {
		return f.DefValue == ""
	}
	// A custom Value's String may not expect its zero value; such a default is shown.
	defer func() {
		if recover() != nil {
			zero = false
		}
	}()
	return f.DefValue == v.String()
}

// parseFlags parses args and turns flag errors into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &UsageError{err}
	}
	return nil
}

// parseWithArgs parses args whose flags may come before, between or after the command's
// arguments (Go's flag package stops at the first argument), and returns the arguments.
func parseWithArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var out []string
	for rest := args; ; {
		if err := parseFlags(fs, rest); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return out, nil
		}
		out, rest = append(out, fs.Arg(0)), fs.Args()[1:]
	}
}

// interruptContexts returns two contexts: soft is cancelled on the first interrupt (finish
// the current point, keep what is done, tear down), hard on the second (abort the current
// point and tear down now). Call stop when done.
func interruptContexts(p *Process) (soft, hard context.Context, stop func()) {
	hard, hardCancel := context.WithCancel(context.Background())
	soft, softCancel := context.WithCancel(hard)
	done := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case <-done:
				return
			case <-p.Interrupts:
				n++
				if n == 1 {
					fmt.Fprintln(p.Stderr, "wirelab: interrupt: finishing the current point, then tearing down (Ctrl-C again to tear down now)")
					softCancel()
				} else {
					fmt.Fprintln(p.Stderr, "wirelab: second interrupt: tearing down now")
					hardCancel()
					return
				}
			}
		}
	}()
	return soft, hard, func() { close(done); softCancel(); hardCancel() }
}

// untilInterrupt is a context that ends at the first interrupt: how a helper wirelab
// starts (the delayer, an agent) is told to clean up and exit. Call stop when done.
func untilInterrupt(p *Process) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-p.Interrupts:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// sshAgentEnv names the ssh-agent socket, which real hosts are logged in to with.
const sshAgentEnv = "SSH_AUTH_SOCK"

// env is the process's environment variable key: read here, at the command's edge, and
// handed down as options; "" when unset or for a process built without an environment.
func (p *Process) env(key string) string {
	if p.Getenv == nil {
		return ""
	}
	return p.Getenv(key)
}

// proc is this machine's /proc, at p.ProcRoot.
func (p *Process) proc() procfs.FS { return procfs.At(p.ProcRoot) }

// procRoot is where proc reads: p.ProcRoot or procfs.DefaultRoot.
func (p *Process) procRoot() string { return p.proc().Root() }

// requireRoot fails with a hint when the lab would need root.
func requireRoot(p *Process) error {
	if p.IsRoot != nil && !p.IsRoot() {
		return errors.New("the lab needs root (network namespaces, tc, iptables): run with sudo")
	}
	return nil
}
