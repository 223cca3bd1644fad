package tunnel

import (
	"fmt"
	"strconv"
	"time"
)

// endFlag is one flag of `wirelab tunnel entry|exit`, declared once: the same entry
// registers it on a flag set, parses it into a Config (set), writes it back into a command
// line (get) and names a key of the --config file.
type endFlag struct {
	name  string
	usage string // the first `backquoted` word is the help's type hint
	def   string // the flag's default, as text; Args leaves out a value equal to it
	bool  bool   // given bare (--stats), parsed as true/false
	// get is c's value as the flag's text ("" when unset: left to the end's default).
	get func(c *Config) string
	// set parses v into c; an error names the flag and the accepted form.
	set func(c *Config, v string) error
}

// endFlags are the flags in the order Args writes them.
var endFlags = []endFlag{
	{name: "listen", usage: "`host:port` to listen on (required; no wildcard without --allow-wildcard)",
		get: func(c *Config) string { return c.Listen }, set: func(c *Config, v string) error { c.Listen = v; return nil }},
	{name: "to", usage: "`host:port` to dial for every connection (required)",
		get: func(c *Config) string { return c.To }, set: func(c *Config, v string) error { c.To = v; return nil }},
	{name: "tls-cert", usage: "this end's certificate (PEM `file`); with --tls-key and --tls-ca enables mutual TLS; SIGHUP reads it again",
		get: func(c *Config) string { return c.TLSCert }, set: func(c *Config, v string) error { c.TLSCert = v; return nil }},
	{name: "tls-key", usage: "this end's private key (PEM `file`)",
		get: func(c *Config) string { return c.TLSKey }, set: func(c *Config, v string) error { c.TLSKey = v; return nil }},
	{name: "tls-ca", usage: "CA certificate that signed the other end (PEM `file`)",
		get: func(c *Config) string { return c.TLSCA }, set: func(c *Config, v string) error { c.TLSCA = v; return nil }},
	{name: "stats", bool: true, def: "false", usage: "print a stats line periodically: raw vs wire bytes each way, ratio, groups, flush reasons",
		get: func(c *Config) string { return strconv.FormatBool(c.PrintStats) },
		set: func(c *Config, v string) (err error) { c.PrintStats, err = parseBool("stats", v); return err }},
	{name: "stats-every", def: DefaultStatsEvery.String(), usage: "`period` of the --stats line",
		get: func(c *Config) string { return durationText(c.StatsEvery) },
		set: func(c *Config, v string) (err error) {
			c.StatsEvery, err = parsePositive("stats-every", v, "10s")
			return err
		}},
	{name: "compress", def: string(Auto), usage: "`mode`: auto (compress while the WAN is the bottleneck), zstd or off",
		get: func(c *Config) string { return string(c.Compress) },
		set: func(c *Config, v string) (err error) { c.Compress, err = ParseMode(v); return err }},
	{name: "level", def: "auto", usage: "zstd `level`: auto (with --mux on: the strongest level that keeps the WAN full; else 1) or 1..22 (4 encoders: 1-2 fastest, 3-5 default, 6-9 better, 10+ best). Codec: " + Codec,
		get: func(c *Config) string { return FormatLevel(c.Level) },
		set: func(c *Config, v string) (err error) { c.Level, err = ParseLevel(v); return err }},
	{name: "mux", def: string(DefaultMux), usage: "entry: the WAN `layout`: on = client connections over up to --links WAN connections (mux links), each sharing one zstd history per direction; off = one WAN connection per client (an exit serves both)",
		get: func(c *Config) string { return string(c.Mux) },
		set: func(c *Config, v string) (err error) { c.Mux, err = ParseMux(v); return err }},
	{name: "links", usage: fmt.Sprintf("entry with --mux on: mux links at most, a `number` 1..%d; a client goes to the link with the fewest and a new link opens only while every link has one, so each link has its own relay thread at both ends (0 = one per CPU, here %d)", MaxLinks, DefaultLinks()),
		get: func(c *Config) string { return intText(c.Links) },
		set: func(c *Config, v string) (err error) { c.Links, err = parseLinks(v); return err }},
	{name: "link-cpus", usage: "with --mux on (an exit: the links it accepts): where each mux link's relay thread runs, a `placement`: spread (default) = on one CPU of those this process may use, a new link on the CPU with the fewest, so a link's clients and server threads settle on its CPU; free = wherever the kernel puts and moves it (on a host whose CPUs other work keeps busy)",
		get: func(c *Config) string { return string(c.LinkCPUs) },
		set: func(c *Config, v string) (err error) { c.LinkCPUs, err = parseOptional(v, ParseLinkCPUs); return err }},
	{name: "window", usage: "zstd window per direction, a power of two `size` like 16MiB (default: " + FormatSize(DefaultMuxWindow) + " with --mux on, " + FormatSize(LongMuxWindow) + " there at levels 10+, " + FormatSize(DefaultWindow) + " per connection without); both ends take the same: a receiver refuses a stream declaring more than its own",
		get: func(c *Config) string { return sizeText(c.Window) },
		set: func(c *Config, v string) (err error) { c.Window, err = parseWindow(v); return err }},
	{name: "group-max-size", def: FormatSize(DefaultGroupMaxSize), usage: "largest group (frame) of bytes, a `size` like 64KiB, 64k, 65536, 1MiB",
		get: func(c *Config) string { return sizeText(c.GroupMaxSize) },
		set: func(c *Config, v string) (err error) { c.GroupMaxSize, err = parseGroupMaxSize(v); return err }},
	{name: "group-timeout", def: DefaultGroupTimeout.String(), usage: "longest a continuously fed group stays open (an idle source flushes at once), a `duration`",
		get: func(c *Config) string { return durationText(c.GroupTimeout) },
		set: func(c *Config, v string) (err error) {
			c.GroupTimeout, err = parsePositive("group-timeout", v, "2ms")
			return err
		}},
	{name: "group-wait", def: GroupWait{}.String(), usage: "on a mux link: how long a frame waits for more bytes after its first, like DTLE's GroupTimeout, for a one-way stream such as a binlog: 0 = send at once, auto = a quarter of the WAN's round trip (the lowest smoothed RTT of its last 10-20 s), or a `duration` like 50ms; a frame still leaves at once at --group-max-size or with a connection's open or end. Every wait is added to a request's round trip: not for request/reply clients",
		get: func(c *Config) string { return c.GroupWait.String() },
		set: func(c *Config, v string) (err error) { c.GroupWait, err = ParseGroupWait(v); return err }},
	{name: "binlog", def: string(BinlogRecode), usage: "exit, on mux links, what to do with a binlog dump, a `mode`: recode = send a MySQL/MariaDB binlog dump's event packets with their length, sequence id, log position and CRC32 zeroed where the entry recomputes them (the replica still receives the server's bytes exactly; a packet that does not check is sent as it came); raw = send them as they come",
		get: func(c *Config) string { return string(c.Binlog) },
		set: func(c *Config, v string) (err error) { c.Binlog, err = ParseBinlog(v); return err }},
	{name: "allow-wildcard", bool: true, def: "false", usage: "allow --listen and --metrics-listen on 0.0.0.0, :: or an empty host",
		get: func(c *Config) string { return strconv.FormatBool(c.AllowWildcard) },
		set: func(c *Config, v string) (err error) {
			c.AllowWildcard, err = parseBool("allow-wildcard", v)
			return err
		}},
	{name: "metrics-listen", usage: "serve Prometheus metrics on `host:port` at /metrics (no wildcard without --allow-wildcard)",
		get: func(c *Config) string { return c.MetricsListen }, set: func(c *Config, v string) error { c.MetricsListen = v; return nil }},
	{name: "drain-timeout", def: DefaultDrainTimeout.String(), usage: "on SIGTERM: stop accepting, let open connections run this long (a `duration`; 0 = close them at once), then close",
		get: func(c *Config) string { return c.DrainTimeout.String() },
		set: func(c *Config, v string) (err error) { c.DrainTimeout, err = parseDrain(v); return err }},
}

// lookupFlag is the end flag called name, nil for none.
func lookupFlag(name string) *endFlag {
	for i := range endFlags {
		if endFlags[i].name == name {
			return &endFlags[i]
		}
	}
	return nil
}

// Args is c as flags of `wirelab tunnel entry|exit`, for a command that starts an end: a
// value left unset or equal to the flag's default is left out, so the end takes its own.
func (c Config) Args() []string {
	var a []string
	for _, f := range endFlags {
		v := f.get(&c)
		switch {
		case v == "" || v == f.def:
		case f.bool:
			a = append(a, "--"+f.name)
		default:
			a = append(a, "--"+f.name, v)
		}
	}
	return a
}

// Argv is the whole command line of the end c describes, self being the wirelab binary.
func (c Config) Argv(self string) []string {
	return append([]string{self, "tunnel", string(c.Role)}, c.Args()...)
}

// flagValue adapts an end flag to the flag package, writing into one Config.
type flagValue struct {
	c *Config
	f *endFlag
}

func (v flagValue) String() string {
	if v.c == nil {
		return ""
	}
	return v.f.get(v.c)
}

func (v flagValue) Set(s string) error { return v.f.set(v.c, s) }

// Get is the value's text, not a string: help shows every default unquoted.
func (v flagValue) Get() any { return flagText(v.String()) }

type flagText string

// boolValue is a flagValue given bare (--stats); its zero value reads "false", so help
// leaves out a false default.
type boolValue struct{ flagValue }

func (v boolValue) String() string {
	if v.c == nil {
		return "false"
	}
	return v.flagValue.String()
}

func (v boolValue) IsBoolFlag() bool { return true }

// Switches are the environment's say in how an end runs: comparisons for the benchmarks,
// not settings for users. The command reads them once (SwitchesFromEnv) and passes them in.
type Switches struct {
	// GoroutineLinks runs mux links on goroutines, without the relay loop
	// (WIRELAB_TUNNEL_LOOP=off).
	GoroutineLinks bool
	// TLSRecords keeps an entry's mux links in crypto/tls's records (WIRELAB_TUNNEL_RECORDS=tls).
	TLSRecords bool
	// FixedProcs leaves GOMAXPROCS alone when relay loops start: it came from the
	// environment (GOMAXPROCS set).
	FixedProcs bool
}

// SwitchesFromEnv reads the switches through getenv.
func SwitchesFromEnv(getenv func(string) string) Switches {
	return Switches{GoroutineLinks: getenv("WIRELAB_TUNNEL_LOOP") == "off",
		TLSRecords: getenv("WIRELAB_TUNNEL_RECORDS") == "tls", FixedProcs: getenv("GOMAXPROCS") != ""}
}

func durationText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

func intText(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func sizeText(n int) string {
	if n == 0 {
		return ""
	}
	return FormatSize(int64(n))
}
