package tunnel

import (
	"flag"
	"fmt"
	"strconv"
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

// Validate checks k with the tunnel's own rules (Config.Validate), so a bad value is
// refused before a lab exists rather than by a tunnel end that fails to start.
func (k Knobs) Validate() error {
	cfg := Config{Role: Entry, Listen: "127.0.0.1:0", To: "127.0.0.1:1", Compress: k.Compress,
		Level: k.Level, Mux: k.Mux, Links: k.Links, LinkCPUs: k.LinkCPUs, Window: int(k.Window), GroupMaxSize: int(k.GroupMaxSize), GroupTimeout: k.GroupTimeout, GroupWait: k.GroupWait}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("--tunnel-*: %w", err)
	}
	return nil
}

// Args are the knobs as flags of `wirelab tunnel entry|exit`, for a command that starts an
// end (in a lab host or on a remote one); a knob left at its zero value is left out, so the
// end takes its own default. --mux goes to the entry only: an exit serves both layouts.
func (k Knobs) Args(role Role) []string {
	var a []string
	if k.Compress != "" {
		a = append(a, "--compress", string(k.Compress))
	}
	if k.Level > 0 {
		a = append(a, "--level", strconv.Itoa(k.Level))
	}
	if k.Mux != "" && role == Entry {
		a = append(a, "--mux", string(k.Mux))
	}
	if k.Links > 0 && role == Entry {
		a = append(a, "--links", strconv.Itoa(k.Links))
	}
	if k.LinkCPUs != "" {
		a = append(a, "--link-cpus", string(k.LinkCPUs))
	}
	if k.Window > 0 {
		a = append(a, "--window", FormatSize(k.Window))
	}
	if k.GroupMaxSize > 0 {
		a = append(a, "--group-max-size", FormatSize(k.GroupMaxSize))
	}
	if k.GroupTimeout > 0 {
		a = append(a, "--group-timeout", k.GroupTimeout.String())
	}
	if !k.GroupWait.IsZero() {
		a = append(a, "--group-wait", k.GroupWait.String())
	}
	if k.Binlog != "" && role == Exit {
		a = append(a, "--binlog", string(k.Binlog))
	}
	return a
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
	fs.StringVar(&f.window, "tunnel-window", "", "with the tunnel channel: zstd window per direction (default: the tunnel's, by --tunnel-mux)")
	fs.StringVar(&f.group, "tunnel-group-max-size", FormatSize(DefaultGroupMaxSize), "with the tunnel channel: largest group (64KiB, 1MiB, ...)")
	fs.DurationVar(&f.timeout, "tunnel-group-timeout", DefaultGroupTimeout, "with the tunnel channel: longest a continuously fed group stays open")
	fs.StringVar(&f.wait, "tunnel-group-wait", wait.String(), "with the tunnel channel and --tunnel-mux on: how long a frame waits for more bytes after its first (0 = send at once, auto = a quarter of the WAN's round trip, or a duration like 50ms); every wait is added to a request's round trip")
	fs.StringVar(&f.binlog, "tunnel-binlog", string(BinlogRecode), "with the tunnel channel and --tunnel-mux on: recode = the exit zeroes what the entry recomputes in a MySQL/MariaDB binlog dump's event packets (length, sequence id, log position, CRC32; the replica receives the server's bytes exactly), raw = sends them as they come")
	return f
}

// Knobs parses and validates the flags; an error names the flag and the accepted form.
func (f *Flags) Knobs() (Knobs, error) {
	var k Knobs
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
	if f.links < 0 || f.links > MaxLinks {
		return k, fmt.Errorf("--tunnel-links %d: want 1..%d, or 0 for one per CPU of the entry's host", f.links, MaxLinks)
	}
	if f.links > 0 && k.Mux != MuxOn {
		return k, fmt.Errorf("--tunnel-links %d: the entry's mux links; only with --tunnel-mux on", f.links)
	}
	k.Links = f.links
	if f.linkCPUs != "" {
		if k.LinkCPUs, err = ParseLinkCPUs(f.linkCPUs); err != nil {
			return k, fmt.Errorf("--tunnel-link-cpus: %w", err)
		}
		if k.Mux != MuxOn {
			return k, fmt.Errorf("--tunnel-link-cpus %s: places mux links' relay threads; only with --tunnel-mux on", k.LinkCPUs)
		}
	}
	if f.window != "" {
		if k.Window, err = ParseSize(f.window); err != nil {
			return k, fmt.Errorf("--tunnel-window: %w", err)
		}
	}
	k.GroupTimeout = f.timeout
	if k.GroupWait, err = ParseGroupWait(f.wait); err != nil {
		return k, fmt.Errorf("--tunnel-group-wait: %w", err)
	}
	if !k.GroupWait.IsZero() && k.Mux != MuxOn {
		return k, fmt.Errorf("--tunnel-group-wait %s: holds a mux link's frames; only with --tunnel-mux on", k.GroupWait)
	}
	if k.Binlog, err = ParseBinlog(f.binlog); err != nil {
		return k, fmt.Errorf("--tunnel-binlog: %w", err)
	}
	return k, k.Validate()
}
