package tunnel

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"
)

// ParseLinkCPUs parses the --link-cpus value.
func ParseLinkCPUs(s string) (LinkCPUs, error) {
	switch c := LinkCPUs(s); c {
	case LinkCPUsSpread, LinkCPUsFree:
		return c, nil
	}
	return "", configErr("--link-cpus %q: want spread or free", s)
}

// ParseMux parses the --mux value.
func ParseMux(s string) (MuxMode, error) {
	switch m := MuxMode(s); m {
	case MuxOn, MuxOff:
		return m, nil
	}
	return "", configErr("--mux %q: want on or off", s)
}

// ParseBinlog parses the --binlog value.
func ParseBinlog(s string) (BinlogMode, error) {
	switch b := BinlogMode(s); b {
	case BinlogRecode, BinlogRaw:
		return b, nil
	}
	return "", configErr("--binlog %q: want recode or raw", s)
}

// ParseLevel parses the --level value: "auto" (0) or a zstd level 1..22.
func ParseLevel(s string) (int, error) {
	if s == "auto" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 22 {
		return 0, configErr("--level %q: want auto or a zstd level 1..22", s)
	}
	return n, nil
}

// FormatLevel is the --level value of a Config.Level.
func FormatLevel(l int) string {
	if l == 0 {
		return "auto"
	}
	return strconv.Itoa(l)
}

// ParseGroupWait parses the --group-wait value: 0, auto or a duration up to MaxGroupWait.
func ParseGroupWait(s string) (GroupWait, error) {
	if s == "auto" {
		return GroupWait{Auto: true}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return GroupWait{}, configErr("--group-wait %q: want 0 (send at once), auto (a quarter of the WAN's round trip) or a duration up to %v, like 50ms", s, MaxGroupWait)
	}
	w := GroupWait{D: d}
	return w, w.check()
}

// check refuses a fixed wait outside 0..MaxGroupWait.
func (w GroupWait) check() error {
	if w.D < 0 || w.D > MaxGroupWait {
		return configErr("--group-wait %v: want 0 (send at once), auto (a quarter of the WAN's round trip) or a duration up to %v, like 50ms", w.D, MaxGroupWait)
	}
	return nil
}

// ErrConfig marks a configuration rejected by New.
var ErrConfig = errors.New("invalid tunnel configuration")

// Config describes one end of a tunnel. Zero Level, GroupMaxSize and GroupTimeout mean
// the defaults above.
type Config struct {
	Role     Role
	Listen   string // host:port; a wildcard host needs AllowWildcard
	To       string // host:port dialled for every accepted connection
	Compress Mode   // auto (default when empty), zstd or off
	// Level is a zstd level 1..22, mapped onto klauspost's four encoders with
	// zstd.EncoderLevelFromZstd: 1-2 fastest, 3-5 default, 6-9 better, 10-22 best.
	// 0 (auto) is DefaultLevel without the mux; on a mux link the level follows the link
	// (level.go).
	Level int
	// Mux is the entry's WAN layout (MuxOff when empty). An exit serves both layouts.
	Mux MuxMode
	// Links is how many mux links an entry spreads its clients over, at most; 0 means
	// DefaultLinks. One link per client at most (linkDialer).
	Links int
	// LinkCPUs is where the mux links' relay threads run (DefaultLinkCPUs when empty); an
	// entry without the mux has none.
	LinkCPUs LinkCPUs
	// Window is the zstd window of each direction, a power of two; 0 means DefaultWindow,
	// or DefaultMuxWindow on a mux link.
	Window       int
	GroupMaxSize int
	GroupTimeout time.Duration
	// GroupWait holds a mux link's frame open for more bytes (zero: send at once).
	GroupWait GroupWait
	// Binlog is what an exit does with a MySQL binlog dump on a mux link (BinlogRecode
	// when empty); an entry restores what it receives either way.
	Binlog BinlogMode
	// TLS enables mutual TLS on the WAN side: a server config for an exit, a client config
	// for an entry (see LoadTLS). Nil: New loads it from TLSCert, TLSKey and TLSCA when they
	// are given, else the WAN side is plaintext.
	TLS *tls.Config
	// TLSCert, TLSKey and TLSCA are the PEM files of this end's certificate, its key and the
	// CA that signed the other end: all three or none. ReloadTLS reads them again.
	TLSCert, TLSKey, TLSCA string
	// AllowWildcard lets Listen and MetricsListen be a wildcard address.
	AllowWildcard bool
	// MetricsListen is where the end serves Prometheus metrics (host:port); "" serves none.
	MetricsListen string
	// DrainTimeout bounds a graceful stop: how long Drain lets open streams run once the end
	// stops accepting. 0 closes them at once.
	DrainTimeout time.Duration
	Logger       *slog.Logger
	PrintStats   bool          // print the stats line to StatsOut every StatsEvery
	StatsEvery   time.Duration // period of the stats line; 0 means DefaultStatsEvery
	StatsOut     io.Writer     // where stats lines go; nil means os.Stdout
	// Switches are the environment's say in how the end runs, read once by the command.
	Switches Switches

	// dial replaces net.Dialer in tests (e.g. a rate-limited connection).
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// roundTrip replaces the WAN RTT a mux link's streams size their windows by (the
	// link's TCP_INFO probe) in tests.
	roundTrip func() time.Duration
}

func configErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, a...))
}

// Validate reports what New would refuse in c, without listening.
func (c Config) Validate() error {
	_, err := c.normalize()
	return err
}

// normalize validates c and fills the defaults; it returns a copy.
func (c Config) normalize() (Config, error) {
	switch c.Role {
	case Entry, Exit:
	default:
		return c, configErr("role %q: want entry or exit", c.Role)
	}
	if err := checkAddr("listen", c.Listen, !c.AllowWildcard); err != nil {
		return c, err
	}
	if err := checkAddr("to", c.To, false); err != nil {
		return c, err
	}
	if _, port, _ := net.SplitHostPort(c.To); port == "0" {
		return c, configErr("--to %q: port 0 cannot be dialled", c.To)
	}
	if c.Compress == "" {
		c.Compress = Auto
	}
	if _, err := ParseMode(string(c.Compress)); err != nil {
		return c, err
	}
	if c.Level < 0 || c.Level > 22 {
		return c, configErr("--level %d: want auto or a zstd level 1..22", c.Level)
	}
	if c.Mux == "" {
		c.Mux = DefaultMux
	}
	if err := c.checkMux(); err != nil {
		return c, err
	}
	if c.LinkCPUs == "" {
		c.LinkCPUs = DefaultLinkCPUs
	}
	if c.Binlog == "" {
		c.Binlog = BinlogRecode
	}
	if _, err := ParseBinlog(string(c.Binlog)); err != nil {
		return c, err
	}
	if c.Binlog == BinlogRaw && c.Role == Entry {
		return c, configErr("--binlog raw: the exit recodes a binlog dump (it is the end next to the server); an entry restores what it receives either way")
	}
	if c.Links == 0 {
		c.Links = DefaultLinks()
	}
	if c.GroupMaxSize == 0 {
		c.GroupMaxSize = DefaultGroupMaxSize
	}
	if c.GroupMaxSize < 1 || c.GroupMaxSize > MaxGroupSize {
		return c, configErr("--group-max-size %d: want 1..%s, like 64KiB", c.GroupMaxSize, FormatSize(MaxGroupSize))
	}
	if c.GroupTimeout == 0 {
		c.GroupTimeout = DefaultGroupTimeout
	}
	if c.GroupTimeout < 0 {
		return c, configErr("--group-timeout %v: want a positive duration like 2ms", c.GroupTimeout)
	}
	if err := c.checkService(); err != nil {
		return c, err
	}
	if c.StatsEvery == 0 {
		c.StatsEvery = DefaultStatsEvery
	}
	if c.PrintStats && c.StatsOut == nil {
		c.StatsOut = os.Stdout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.TLS != nil {
		t, err := c.endTLS(c.TLS)
		if err != nil {
			return c, err
		}
		c.TLS = t
	}
	return c, nil
}

// endTLS is t as this end uses it (a copy): TLS 1.3, the exit's name checked at the entry,
// client certificates required at the exit, no session tickets from the exit.
func (c Config) endTLS(t *tls.Config) (*tls.Config, error) {
	t = t.Clone()
	if t.MinVersion < tls.VersionTLS13 {
		t.MinVersion = tls.VersionTLS13
	}
	if c.Role == Entry && t.ServerName == "" {
		t.ServerName, _, _ = net.SplitHostPort(c.To)
	}
	if c.Role == Exit && t.ClientAuth != tls.RequireAndVerifyClientCert {
		return nil, configErr("exit TLS must require and verify client certificates (use LoadTLS with server=true)")
	}
	// A mux link leaves TLS's record layer after its preface (records.go): a session
	// ticket the exit sent after the handshake would arrive among the link's own
	// records. The entry never resumes a session, so the exit sends none.
	t.SessionTicketsDisabled = t.SessionTicketsDisabled || c.Role == Exit
	return t, nil
}

// loadTLS reads the TLS files, when given, into the end's TLS config.
func (c Config) loadTLS() (*tls.Config, error) {
	if c.TLSCert == "" {
		return c.TLS, nil
	}
	t, err := LoadTLS(c.TLSCert, c.TLSKey, c.TLSCA, c.Role == Exit)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return c.endTLS(t)
}

// checkService validates what makes the end a service: its metrics address, TLS files,
// stats period and drain timeout.
func (c Config) checkService() error {
	if c.MetricsListen != "" {
		if err := checkAddr("metrics-listen", c.MetricsListen, !c.AllowWildcard); err != nil {
			return err
		}
	}
	if n := countSet(c.TLSCert, c.TLSKey, c.TLSCA); n > 0 && n < 3 {
		return configErr("--tls-cert, --tls-key and --tls-ca go together: give all three or none")
	}
	if c.StatsEvery < 0 {
		return configErr("--stats-every %v: want a positive duration like 10s", c.StatsEvery)
	}
	if c.DrainTimeout < 0 {
		return configErr("--drain-timeout %v: want a duration like 30s, or 0 to close open streams at once", c.DrainTimeout)
	}
	return nil
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

// checkMux validates the mux layout, the number of links and their CPUs, the group wait and
// the zstd window.
func (c Config) checkMux() error {
	if _, err := ParseMux(string(c.Mux)); err != nil {
		return err
	}
	if c.Links < 0 || c.Links > MaxLinks {
		return configErr("--links %d: want 1..%d, or 0 for one per CPU", c.Links, MaxLinks)
	}
	if c.Links > 0 && (c.Role != Entry || c.Mux != MuxOn) {
		return configErr("--links %d: an entry's mux links; only with --mux on on an entry", c.Links)
	}
	if c.LinkCPUs != "" {
		if _, err := ParseLinkCPUs(string(c.LinkCPUs)); err != nil {
			return err
		}
		if c.Role == Entry && c.Mux != MuxOn {
			return configErr("--link-cpus %s: places mux links' relay threads; an entry has them only with --mux on", c.LinkCPUs)
		}
	}
	if !c.GroupWait.IsZero() && c.Role == Entry && c.Mux != MuxOn {
		return configErr("--group-wait %s: holds a mux link's frames; only with --mux on on an entry", c.GroupWait)
	}
	if err := c.GroupWait.check(); err != nil {
		return err
	}
	if c.Window != 0 && (c.Window < 1<<10 || c.Window > MaxWindow || c.Window&(c.Window-1) != 0) {
		return configErr("--window %d: want a power of two from 1KiB to %s, like 16MiB", c.Window, FormatSize(MaxWindow))
	}
	return nil
}

// ParseMode parses the --compress value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Auto, Zstd, Off:
		return m, nil
	}
	return "", configErr("--compress %q: want auto, zstd or off", s)
}

// checkAddr rejects what is not host:port with a numeric port, and wildcard hosts when
// noWildcard is set: a tunnel exit on 0.0.0.0 would hand the database to anyone routable.
func checkAddr(flag, addr string, noWildcard bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return configErr("--%s %q: want host:port, like 127.0.0.1:3307: %v", flag, addr, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return configErr("--%s %q: port must be a number 0..65535", flag, addr)
	}
	if host == "" && flag == "to" {
		return configErr("--%s %q: want a host", flag, addr)
	}
	if noWildcard {
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			return configErr("--%s %q: refusing a wildcard address; name an interface address or pass --allow-wildcard", flag, addr)
		}
	}
	return nil
}

// parseBool parses a boolean flag's value.
func parseBool(flag, s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, configErr("--%s %q: want true or false", flag, s)
	}
	return b, nil
}

// parsePositive parses a duration above 0, like example.
func parsePositive(flag, s, example string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, configErr("--%s %q: want a positive duration like %s", flag, s, example)
	}
	return d, nil
}

// parseDrain parses the --drain-timeout value: a duration, 0 included.
func parseDrain(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, configErr("--drain-timeout %q: want a duration like 30s, or 0 to close open connections at once", s)
	}
	return d, nil
}

// parseLinks parses the --links value; its range is checkMux's.
func parseLinks(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, configErr("--links %q: want 1..%d, or 0 for one per CPU", s, MaxLinks)
	}
	return n, nil
}

// parseOptional parses s with parse, "" being the default.
func parseOptional[T ~string](s string, parse func(string) (T, error)) (T, error) {
	if s == "" {
		return "", nil
	}
	return parse(s)
}

// parseWindow parses the --window value; what a window may be is checkMux's.
func parseWindow(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := ParseSize(s)
	if err != nil || n > MaxWindow {
		return 0, configErr("--window %q: want a power of two from 1KiB to %s, like 16MiB", s, FormatSize(MaxWindow))
	}
	return int(n), nil
}

// parseGroupMaxSize parses the --group-max-size value: 1 byte to MaxGroupSize.
func parseGroupMaxSize(s string) (int, error) {
	n, err := ParseSize(s)
	if err != nil || n <= 0 || n > MaxGroupSize {
		return 0, configErr("--group-max-size %q: want a positive size up to %s, like 64KiB", s, FormatSize(MaxGroupSize))
	}
	return int(n), nil
}
