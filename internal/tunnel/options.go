package tunnel

import (
	"flag"
	"fmt"
	"strings"
	"time"
)

// Knobs are the tunnel's tuning knobs as a command that runs both ends (run, study
// bandwidth, study replication) takes them: typed and validated once, before anything
// starts.
type Knobs struct {
	Compress     Mode
	Level        int // 0 = auto
	Mux          MuxMode
	Links        int      // the entry's mux links at most; 0 = one per CPU of the entry's host
	LinkCPUs     LinkCPUs // where both ends' relay threads run; "" = the tunnel's default (spread)
	Window       int64    // zstd window per direction; 0 = the tunnel's default for Mux
	GroupMaxSize int64
	GroupTimeout time.Duration
	GroupWait    GroupWait
	Binlog       BinlogMode // the exit's; "" = the tunnel's default (recode)
}

// Config is the knobs as one end takes them (the rest of its Config left zero): --mux and
// --links go to the entry only (an exit serves both layouts), --binlog to the exit only.
func (k Knobs) Config(role Role) Config {
	c := Config{Role: role, Compress: k.Compress, Level: k.Level, LinkCPUs: k.LinkCPUs, Window: int(k.Window),
		GroupMaxSize: int(k.GroupMaxSize), GroupTimeout: k.GroupTimeout, GroupWait: k.GroupWait}
	if role == Entry {
		c.Mux, c.Links = k.Mux, k.Links
	} else {
		c.Binlog = k.Binlog
	}
	return c
}

// Validate checks k with the tunnel's own rules (Config.Validate, at both ends), so a bad
// value is refused before a lab exists rather than by a tunnel end that fails to start. An
// error names the --tunnel-* flag.
func (k Knobs) Validate() error {
	for _, role := range []Role{Entry, Exit} {
		c := k.Config(role)
		c.Listen, c.To = "127.0.0.1:0", "127.0.0.1:1"
		if err := c.Validate(); err != nil {
			// The end's rules name its own flags; here they are the --tunnel-* ones.
			msg := strings.TrimPrefix(err.Error(), ErrConfig.Error()+": ")
			return fmt.Errorf("%w: %s", ErrConfig, strings.ReplaceAll(msg, "--", "--tunnel-"))
		}
	}
	return nil
}

// Flags are the --tunnel-* flags of a command that runs both ends.
type Flags struct {
	compress, level, mux, window, group, wait, binlog, linkCPUs string
	links                                                       int
	timeout                                                     time.Duration
}

// AddFlags registers the --tunnel-* flags on fs; compress and wait are the command's
// defaults for --tunnel-compress and --tunnel-group-wait.
func AddFlags(fs *flag.FlagSet, compress Mode, wait GroupWait) *Flags {
	f := &Flags{}
	fs.StringVar(&f.compress, "tunnel-compress", string(compress), "with the tunnel channel: auto, zstd or off")
	fs.StringVar(&f.level, "tunnel-level", "auto", "with the tunnel channel: zstd level, auto or 1..22")
	fs.StringVar(&f.mux, "tunnel-mux", string(DefaultMux), "with the tunnel channel: on = all client connections over one WAN connection, off = one each")
	fs.IntVar(&f.links, "tunnel-links", 0, "with the tunnel channel and --tunnel-mux on: the entry's WAN connections at most, a client each until all are used (0 = one per CPU of the entry's host)")
	fs.StringVar(&f.linkCPUs, "tunnel-link-cpus", "", "with the tunnel channel and --tunnel-mux on: where each mux link's relay thread runs at both ends: spread (default) = on one CPU, the links spread over the CPUs; free = wherever the kernel puts it")
	fs.StringVar(&f.window, "tunnel-window", "", "with the tunnel channel: zstd window per direction, given to both ends (default: the tunnel's, by --tunnel-mux)")
	fs.StringVar(&f.group, "tunnel-group-max-size", FormatSize(DefaultGroupMaxSize), "with the tunnel channel: largest group (64KiB, 1MiB, ...)")
	fs.DurationVar(&f.timeout, "tunnel-group-timeout", DefaultGroupTimeout, "with the tunnel channel: longest a continuously fed group stays open")
	fs.StringVar(&f.wait, "tunnel-group-wait", wait.String(), "with the tunnel channel and --tunnel-mux on: how long a frame waits for more bytes after its first (0 = send at once, auto = a quarter of the WAN's round trip, or a duration like 50ms); every wait is added to a request's round trip")
	fs.StringVar(&f.binlog, "tunnel-binlog", string(BinlogRecode), "with the tunnel channel and --tunnel-mux on: recode = the exit zeroes what the entry recomputes in a MySQL/MariaDB binlog dump's event packets (length, sequence id, log position, CRC32; the replica receives the server's bytes exactly), raw = sends them as they come")
	return f
}

// Knobs parses and validates the flags; an error names the flag and the accepted form.
func (f *Flags) Knobs() (Knobs, error) {
	k := Knobs{Links: f.links, GroupTimeout: f.timeout}
	var err error
	if k.Compress, err = ParseMode(f.compress); err != nil {
		return k, fmt.Errorf("--tunnel-compress: %w", err)
	}
	if k.GroupMaxSize, err = ParseSize(f.group); err != nil {
		return k, fmt.Errorf("--tunnel-group-max-size: %w", err)
	}
	if k.Level, err = ParseLevel(f.level); err != nil {
		return k, fmt.Errorf("--tunnel-level: %w", err)
	}
	if k.Mux, err = ParseMux(f.mux); err != nil {
		return k, fmt.Errorf("--tunnel-mux: %w", err)
	}
	if k.LinkCPUs, err = parseOptional(f.linkCPUs, ParseLinkCPUs); err != nil {
		return k, fmt.Errorf("--tunnel-link-cpus: %w", err)
	}
	if f.window != "" {
		if k.Window, err = ParseSize(f.window); err != nil {
			return k, fmt.Errorf("--tunnel-window: %w", err)
		}
	}
	if k.GroupWait, err = ParseGroupWait(f.wait); err != nil {
		return k, fmt.Errorf("--tunnel-group-wait: %w", err)
	}
	if k.Binlog, err = ParseBinlog(f.binlog); err != nil {
		return k, fmt.Errorf("--tunnel-binlog: %w", err)
	}
	return k, k.Validate()
}
