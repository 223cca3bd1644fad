package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/tunnel"
)

const tunnelUsage = `wirelab tunnel: a WAN channel that groups and compresses MySQL traffic

Usage:
  wirelab tunnel exit  --listen ADDR --to SERVER [flags]   near the server / replication source
  wirelab tunnel entry --listen ADDR --to EXIT   [flags]   near the client / replica
  wirelab tunnel certs --out DIR [--hosts LIST]            CA + exit and entry certs for mutual TLS
  wirelab tunnel goals [--tsv]                             the tunnel's targets and where each is measured

Example:
  wirelab tunnel certs --out certs
  wirelab tunnel exit  --listen 198.18.0.2:4406 --to 127.0.0.1:3306 --tls-cert certs/exit.pem --tls-key certs/exit-key.pem --tls-ca certs/ca.pem
  wirelab tunnel entry --listen 127.0.0.1:3307 --to 198.18.0.2:4406 --tls-cert certs/entry.pem --tls-key certs/entry-key.pem --tls-ca certs/ca.pem

Compression: ` + tunnel.Codec + `; the receiver decodes any zstd stream.

Run 'wirelab tunnel <entry|exit|certs|goals> --help' for flags.`

// cmdTunnel dispatches to the tunnel's entry, exit and certs subcommands.
func cmdTunnel(p *Process, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(p.Stdout, tunnelUsage)
		return nil
	}
	switch args[0] {
	case "entry", "exit":
		return tunnelEnd(p, tunnel.Role(args[0]), args[1:])
	case "certs":
		return tunnelCerts(p, args[1:])
	case "goals":
		return tunnelGoals(p, args[1:])
	}
	fmt.Fprintln(p.Stderr, tunnelUsage)
	return usagef("tunnel: unknown subcommand %q: want entry, exit, certs or goals", args[0])
}

// sizeFlag is a byte count flag accepting 65536, 64k, 64KiB, 1MiB.
type sizeFlag struct{ n int64 }

func (s *sizeFlag) String() string { return tunnel.FormatSize(s.n) }
func (s *sizeFlag) Set(v string) error {
	n, err := tunnel.ParseSize(v)
	if err != nil {
		return err
	}
	s.n = n
	return nil
}

func tunnelEnd(p *Process, role tunnel.Role, args []string) error {
	example := map[tunnel.Role]string{
		tunnel.Exit: "wirelab tunnel exit --listen 198.18.0.2:4406 --to 127.0.0.1:3306 \\\n" +
			"    --tls-cert certs/exit.pem --tls-key certs/exit-key.pem --tls-ca certs/ca.pem --stats",
		tunnel.Entry: "wirelab tunnel entry --listen 127.0.0.1:3307 --to 198.18.0.2:4406 \\\n" +
			"    --tls-cert certs/entry.pem --tls-key certs/entry-key.pem --tls-ca certs/ca.pem --stats",
	}[role]
	summary := map[tunnel.Role]string{
		tunnel.Exit:  "accept tunnel entries and relay each connection to the server",
		tunnel.Entry: "accept clients and relay them to the exit: each over its own WAN connection, or over a few shared ones (--mux on)",
	}[role]
	fs := newFlagSet(p, "tunnel "+string(role), summary, example)
	listen := fs.String("listen", "", "address to listen on, host:port (required; no wildcard without --allow-wildcard)")
	to := fs.String("to", "", "address to dial for every connection, host:port (required)")
	compress := fs.String("compress", string(tunnel.Auto), "auto (compress while the WAN is the bottleneck), zstd or off")
	level := fs.String("level", "auto", "zstd level: auto (with --mux on: the strongest level that keeps the WAN full; else 1) or 1..22 (4 encoders: 1-2 fastest, 3-5 default, 6-9 better, 10+ best). Codec: "+tunnel.Codec)
	mux := fs.String("mux", string(tunnel.DefaultMux), "entry: on = client connections over up to --links WAN connections (mux links), each sharing one zstd history per direction; off = one WAN connection per client (an exit serves both)")
	links := fs.Int("links", 0, fmt.Sprintf("entry with --mux on: mux links at most, 1..%d; a client goes to the link with the fewest and a new link opens only while every link has one, so each link has its own relay thread at both ends (0 = one per CPU, here %d)", tunnel.MaxLinks, tunnel.DefaultLinks()))
	linkCPUs := fs.String("link-cpus", "", "with --mux on (an exit: the links it accepts): where each mux link's relay thread runs: spread (default) = on one CPU of those this process may use, a new link on the CPU with the fewest, so a link's clients and server threads settle on its CPU; free = wherever the kernel puts and moves it (on a host whose CPUs other work keeps busy)")
	window := &sizeFlag{}
	fs.Var(window, "window", "zstd window per direction, a power of two like 16MiB (default: "+tunnel.FormatSize(tunnel.DefaultMuxWindow)+" with --mux on, "+tunnel.FormatSize(tunnel.LongMuxWindow)+" there at levels 10+, "+tunnel.FormatSize(tunnel.DefaultWindow)+" per connection without)")
	group := &sizeFlag{tunnel.DefaultGroupMaxSize}
	fs.Var(group, "group-max-size", "largest group (frame) of bytes, like 64KiB, 64k, 65536, 1MiB")
	timeout := fs.Duration("group-timeout", tunnel.DefaultGroupTimeout, "longest a continuously fed group stays open (an idle source flushes at once)")
	wait := fs.String("group-wait", "0", "on a mux link: how long a frame waits for more bytes after its first, like DTLE's GroupTimeout, for a one-way stream such as a binlog: 0 = send at once, auto = a quarter of the WAN's round trip (the lowest smoothed RTT of its last 10-20 s), or a duration like 50ms; a frame still leaves at once at --group-max-size or with a connection's open or end. Every wait is added to a request's round trip: not for request/reply clients")
	binlog := fs.String("binlog", "recode", "exit, on mux links: recode = send a MySQL/MariaDB binlog dump's event packets with their length, sequence id, log position and CRC32 zeroed where the entry recomputes them (the replica still receives the server's bytes exactly; a packet that does not check is sent as it came); raw = send them as they come")
	cert := fs.String("tls-cert", "", "this end's certificate (PEM); with --tls-key and --tls-ca enables mutual TLS")
	key := fs.String("tls-key", "", "this end's private key (PEM)")
	ca := fs.String("tls-ca", "", "CA certificate that signed the other end (PEM)")
	wildcard := fs.Bool("allow-wildcard", false, "allow listening on 0.0.0.0, :: or an empty host")
	stats := fs.Bool("stats", false, "print a stats line periodically: raw vs wire bytes each way, ratio, groups, flush reasons")
	statsEvery := fs.Duration("stats-every", 5*time.Second, "period of the --stats line")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("tunnel %s: unexpected arguments %q", role, fs.Args())
	}
	if *listen == "" || *to == "" {
		return usagef("tunnel %s: --listen and --to are required, like: %s", role, strings.SplitN(example, "\\", 2)[0])
	}
	mode, err := tunnel.ParseMode(*compress)
	if err != nil {
		return &UsageError{err}
	}
	if group.n <= 0 {
		return usagef("tunnel %s: --group-max-size %s: want a positive size like 64KiB", role, group)
	}
	if group.n > tunnel.MaxGroupSize {
		return usagef("tunnel %s: --group-max-size %s: at most %s", role, group, tunnel.FormatSize(tunnel.MaxGroupSize))
	}
	if *timeout <= 0 {
		return usagef("tunnel %s: --group-timeout %v: want a positive duration like 2ms", role, *timeout)
	}
	gw, err := tunnel.ParseGroupWait(*wait)
	if err != nil {
		return usagef("tunnel %s: %w", role, err)
	}
	lvl, err := tunnel.ParseLevel(*level)
	if err != nil {
		return usagef("tunnel %s: %w", role, err)
	}
	muxMode, err := tunnel.ParseMux(*mux)
	if err != nil {
		return usagef("tunnel %s: %w", role, err)
	}
	binlogMode, err := tunnel.ParseBinlog(*binlog)
	if err != nil {
		return usagef("tunnel %s: %w", role, err)
	}
	var cpus tunnel.LinkCPUs
	if *linkCPUs != "" {
		if cpus, err = tunnel.ParseLinkCPUs(*linkCPUs); err != nil {
			return usagef("tunnel %s: %w", role, err)
		}
	}
	cfg := tunnel.Config{
		Role: role, Listen: *listen, To: *to, Compress: mode, Level: lvl, Mux: muxMode, Links: *links, LinkCPUs: cpus, Window: int(window.n),
		GroupMaxSize: int(group.n), GroupTimeout: *timeout, GroupWait: gw, Binlog: binlogMode, AllowWildcard: *wildcard,
		Logger: p.Logger.With("cmd", "tunnel"),
	}
	if *stats {
		cfg.StatsEvery, cfg.Stats = *statsEvery, p.Stdout
	}
	switch n := countSet(*cert, *key, *ca); {
	case n == 3:
		if cfg.TLS, err = tunnel.LoadTLS(*cert, *key, *ca, role == tunnel.Exit); err != nil {
			// A certificate that cannot be read is a bad flag value: exit 2, naming the flag.
			return usagef("tunnel %s: %w", role, err)
		}
	case n > 0:
		return usagef("tunnel %s: --tls-cert, --tls-key and --tls-ca go together: give all three or none", role)
	default:
		p.Logger.Warn("tunnel without TLS: the WAN side is plaintext and unauthenticated", "role", string(role))
	}
	t, err := tunnel.New(cfg)
	if err != nil {
		var ue error = err
		if errors.Is(err, tunnel.ErrConfig) {
			ue = &UsageError{err}
		}
		return ue
	}
	return serveUntilInterrupted(p, role, t)
}

// serveUntilInterrupted runs t until the first interrupt, which stops it cleanly: the
// listener and every relayed connection close and Serve waits for its goroutines. A
// tunnel has no points to finish, so cli.go's study wording does not fit it. A second
// interrupt returns at once (exit 130) in case closing hangs.
func serveUntilInterrupted(p *Process, role tunnel.Role, t *tunnel.Tunnel) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- t.Serve(ctx) }()
	interrupted := false
	for {
		select {
		case err := <-done:
			if err == nil && interrupted {
				fmt.Fprintf(p.Stderr, "wirelab tunnel %s: stopped\n", role)
			}
			return err
		case <-p.Interrupts:
			if interrupted {
				fmt.Fprintf(p.Stderr, "wirelab tunnel %s: second interrupt: exiting without waiting for connections to close\n", role)
				return &ExitError{Code: 130}
			}
			interrupted = true
			fmt.Fprintf(p.Stderr, "wirelab tunnel %s: interrupt: closing the listener and %d open connection(s) (Ctrl-C again to exit now)\n",
				role, t.Stats().ActiveConns)
			cancel()
		}
	}
}

func countSet(vals ...string) int {
	n := 0
	for _, v := range vals {
		if v != "" {
			n++
		}
	}
	return n
}

func tunnelCerts(p *Process, args []string) error {
	fs := newFlagSet(p, "tunnel certs", "write a CA, an exit (server) and an entry (client) certificate for mutual TLS",
		"wirelab tunnel certs --out certs --hosts 198.18.0.2,127.0.0.1,localhost")
	out := fs.String("out", "", "directory to write ca.pem, exit.pem, exit-key.pem, entry.pem, entry-key.pem (required)")
	hosts := fs.String("hosts", strings.Join(tunnel.DefaultCertHosts, ","), "comma-separated IPs and names the exit certificate is valid for")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usagef("tunnel certs: --out DIR is required")
	}
	var list []string
	for _, h := range strings.Split(*hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			list = append(list, h)
		}
	}
	if len(list) == 0 {
		return usagef("tunnel certs: --hosts %q: want a comma-separated list like 198.18.0.2,127.0.0.1,localhost", *hosts)
	}
	if err := tunnel.GenerateCerts(*out, list); err != nil {
		return fmt.Errorf("tunnel certs: %w", err)
	}
	fmt.Fprintf(p.Stdout, "wrote %s/{%s,%s,%s,%s,%s} (exit valid for %s)\n", *out, tunnel.CAFile,
		tunnel.ExitCertFile, tunnel.ExitKeyFile, tunnel.EntryCertFile, tunnel.EntryKeyFile, strings.Join(list, ", "))
	return nil
}

var _ flag.Value = (*sizeFlag)(nil)

// tunnelGoals prints the tunnel's targets: a markdown table, the rows the README and
// docs/bench-tunnel.md quote, or with --tsv key, comparison (>= or <=), value and unit for
// scripts.
func tunnelGoals(p *Process, args []string) error {
	fs := newFlagSet(p, "tunnel goals", "print the tunnel's targets and where each is measured",
		"wirelab tunnel goals\nwirelab tunnel goals --tsv\nwirelab tunnel goals --table docs/bench/tunnel-goals.json")
	tsv := fs.Bool("tsv", false, "print key, comparison (>= or <=), value and unit, tab-separated, one goal per line")
	judge := tunnel.AddJudgeFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("tunnel goals: unexpected arguments %q", fs.Args())
	}
	if judge.Given() {
		if err := judge.Validate(); err != nil {
			return &UsageError{err}
		}
		if *tsv {
			return usagef("tunnel goals: --tsv prints the targets; drop it to judge or print verdicts")
		}
		return judge.Run(p.Stdout)
	}
	if *tsv {
		for _, g := range tunnel.Goals() {
			op := "<="
			if g.AtLeast {
				op = ">="
			}
			fmt.Fprintf(p.Stdout, "%s\t%s\t%s\t%s\n", g.Key, op, g.Threshold(), strings.TrimSpace(g.Unit))
		}
		return nil
	}
	fmt.Fprintln(p.Stdout, "| goal | measure | target | measured by |")
	fmt.Fprintln(p.Stdout, "|---|---|---|---|")
	for _, g := range tunnel.Goals() {
		fmt.Fprintln(p.Stdout, g.Row())
	}
	return nil
}
