package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
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

// tunnelEnd runs `wirelab tunnel entry|exit`: the tunnel parses its own flags (and
// --config file); here they are wired to this process's streams, environment and signals.
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
	fs := newFlagSet(p, "tunnel "+string(role), summary, example+"\nwirelab tunnel "+string(role)+" --config /etc/wirelab/tunnel-"+string(role)+".yaml")
	cmd := tunnel.AddEndFlags(fs, role)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("tunnel %s: unexpected arguments %q", role, fs.Args())
	}
	cfg, err := cmd.Config()
	if err != nil {
		return usagef("tunnel %s: %w; like: %s", role, err, strings.SplitN(example, "\\", 2)[0])
	}
	cfg.Logger, cfg.StatsOut = p.Logger.With("cmd", "tunnel"), p.Stdout
	cfg.Switches = tunnel.SwitchesFromEnv(p.Getenv)
	t, err := tunnel.New(cfg)
	if err != nil {
		if errors.Is(err, tunnel.ErrConfig) {
			// A certificate that cannot be read is a bad flag value: exit 2, naming the flag.
			return usagef("tunnel %s: %w", role, err)
		}
		return err
	}
	return serveTunnel(p, role, t, cfg.DrainTimeout)
}

// serveTunnel runs t until a signal stops it. SIGTERM (a service manager's stop) drains:
// t stops accepting and its open connections run up to drain, then close. An interrupt
// (Ctrl-C) closes the listener and every connection at once. Either way Serve waits for its
// goroutines; a second signal returns at once (exit 130) in case closing hangs. SIGHUP
// reloads the TLS files. A tunnel has no points to finish, so cli.go's study wording does
// not fit it.
func serveTunnel(p *Process, role tunnel.Role, t *tunnel.Tunnel, drain time.Duration) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var hangups <-chan os.Signal
	if p.Hangups != nil {
		c, stop := p.Hangups()
		defer stop()
		hangups = c
	}
	done := make(chan error, 1)
	go func() { done <- t.Serve(ctx) }()
	stopping := false
	for {
		select {
		case err := <-done:
			if err == nil && stopping {
				fmt.Fprintf(p.Stderr, "wirelab tunnel %s: stopped\n", role)
			}
			return err
		case <-hangups:
			if err := t.ReloadTLS(); err != nil {
				fmt.Fprintf(p.Stderr, "wirelab tunnel %s: SIGHUP: %v\n", role, err)
			}
		case sig := <-p.Interrupts:
			if stopping {
				fmt.Fprintf(p.Stderr, "wirelab tunnel %s: second signal: exiting without waiting for connections to close\n", role)
				return &ExitError{Code: 130}
			}
			stopping = true
			open := t.Stats().ActiveConns
			if sig != syscall.SIGTERM || drain == 0 {
				fmt.Fprintf(p.Stderr, "wirelab tunnel %s: %v: closing the listener and %d open connection(s) (Ctrl-C again to exit now)\n", role, signalName(sig), open)
				cancel()
				continue
			}
			fmt.Fprintf(p.Stderr, "wirelab tunnel %s: SIGTERM: closed the listener; draining %d open connection(s) for up to %v\n", role, open, drain)
			go func() {
				dctx, dcancel := context.WithTimeout(ctx, drain)
				defer dcancel()
				if t.Drain(dctx) != nil {
					fmt.Fprintf(p.Stderr, "wirelab tunnel %s: drain: %d connection(s) still open after %v: closing them\n", role, t.Stats().ActiveConns, drain)
				}
				cancel()
			}()
		}
	}
}

// signalName is how the stop messages name sig.
func signalName(sig os.Signal) string {
	if sig == os.Interrupt {
		return "interrupt"
	}
	return sig.String()
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
