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
	"runtime"
	"strconv"
	"time"
)

// Role says which end of the tunnel this process is.
type Role string

const (
	// Entry listens for plain clients (a mysql client, a replica) and dials the exit.
	Entry Role = "entry"
	// Exit listens for entries and dials the real server.
	Exit Role = "exit"
)

// Mode is the compression policy of the sending side.
type Mode string

const (
	// Auto compresses while the WAN is the bottleneck (writes wait, or the WAN socket
	// shows a queue in TCP_INFO), sends raw otherwise.
	Auto Mode = "auto"
	// Zstd compresses every group.
	Zstd Mode = "zstd"
	// Off sends raw frames only (still grouped and checksummed).
	Off Mode = "off"
)

// Defaults, chosen by measurement (see scripts/bench-tunnel.sh and the package benchmarks).
const (
	// DefaultLevel is zstd level 1 (klauspost SpeedFastest): on MySQL-like streams it gives
	// most of the ratio of level 3 at a fraction of the CPU.
	DefaultLevel = 1
	// DefaultGroupMaxSize bounds a frame; past 64KiB ratio and syscall savings flatten out
	// while a frame's latency on a narrow link keeps growing.
	DefaultGroupMaxSize = 64 << 10
	// DefaultGroupTimeout bounds how long a continuously fed group stays open. A group is
	// also closed as soon as the source has nothing more to read, so a lone request never
	// waits for it.
	DefaultGroupTimeout = 2 * time.Millisecond
	// MaxGroupSize is the protocol limit on a frame's raw size; receivers reject larger.
	MaxGroupSize = 16 << 20
	// DefaultWindow is the zstd window of one connection's direction without the mux: it
	// holds thousands of row images and bounds memory per connection.
	DefaultWindow = 1 << 20
	// DefaultMuxWindow is the zstd window of each direction of a mux link, shared by every
	// connection it carries. 16 MiB is several seconds of a 20-50 Mbit link's raw traffic
	// (hot rows read again by other connections are still in it) and more than the match
	// tables of the fastest to better encoders reach, at 16 MiB of memory per direction and
	// end. The best encoder reaches further: LongMuxWindow.
	DefaultMuxWindow = 16 << 20
	// LongMuxWindow is the window of a mux link's best encoder (levels 10-22) when --window
	// is not given. The level policy picks that encoder where the link, not the CPU, is the
	// limit, and there the window decides the ratio: the best encoder finds matches as far
	// back as the window reaches, so a row image the link carried minutes ago (the
	// before-image of an UPDATE, a row read again) is sent as a reference. On a captured
	// binlog stream of oltp_write_only whose table (19 MB of rows) had passed before, 4 KiB
	// frames at level 11 read 2.94x with the 16 MiB window and 4.00x with 64 MiB
	// (BenchmarkCaptureWindow). Memory: the encoder reserves twice the window and the
	// receiver's decoder up to the window, touched only as history accumulates.
	LongMuxWindow = 128 << 20
	// MaxWindow bounds --window; a receiver accepts any stream up to it.
	MaxWindow = 256 << 20
	// DefaultStatsEvery is the period of the --stats line.
	DefaultStatsEvery = 5 * time.Second
	// DefaultDrainTimeout is how long a stopping end lets open streams run (--drain-timeout):
	// long enough for a request or a short transaction, short of a service manager's own
	// stop timeout (systemd's 90 s).
	DefaultDrainTimeout = 30 * time.Second
)

// Codec names the zstd implementation the sender encodes with (`tunnel --help` says it):
// pure Go, so the tunnel builds and runs without cgo. Its levels are four encoders. libzstd
// (through a cgo binding) was measured against them and not adopted: on a captured binlog
// stream with the table's rows in the window its 13 and 16 compressed 9% and 16% better
// than level 11, but in the replication study, alternating with this encoder, the tunnel
// with libzstd 13 sustained the same load and carried the binlog no better near the
// link's limit (16 stepped down there on a saturated box, and a change of level loses the
// window's history). docs/bench-tunnel.md has the figures.
const Codec = "pure-Go zstd (github.com/klauspost/compress)"

// MuxMode says whether an entry carries all client connections over one WAN connection.
type MuxMode string

const (
	// MuxOn carries every client connection over one WAN connection, one zstd stream per
	// direction shared by all of them (mux.go).
	MuxOn MuxMode = "on"
	// MuxOff opens one WAN connection per client connection.
	MuxOff MuxMode = "off"
)

// DefaultMux is the entry's mode when Config.Mux is empty.
// The mux link is the default: at 20 mbit it carried 1.7-2.0× protocol compression's TPS
// against 1.5× for one stream per connection, and replication's sustainable load rose; it
// costs about a tenth of the TPS of one connection per client on an unshaped wire.
const DefaultMux = MuxOn

// DefaultLinks is an entry's Config.Links when 0: one mux link per CPU, so that as many
// clients' round trips can be relayed at once as the machine has cores.
func DefaultLinks() int { return runtime.NumCPU() }

// MaxLinks bounds Config.Links.
const MaxLinks = 64

// LinkCPUs says where the relay threads of a process's mux links run.
type LinkCPUs string

const (
	// LinkCPUsSpread keeps each link's relay thread on one CPU of those the process may
	// use, a new link on the CPU with the fewest (the lowest-numbered of them). A relay
	// thread the kernel may move takes its link's clients and server threads with it, one
	// CPU to the other, and leaves a CPU idle while the other has work: at 2 clients on two
	// CPUs, two socat hops per connection kept each connection on one CPU and relayed more.
	// Held on its CPU, the thread draws its link's other threads to it (docs/bench-tunnel.md).
	LinkCPUsSpread LinkCPUs = "spread"
	// LinkCPUsFree lets the kernel place and move the relay threads.
	LinkCPUsFree LinkCPUs = "free"
)

// DefaultLinkCPUs is Config.LinkCPUs when empty.
const DefaultLinkCPUs = LinkCPUsSpread

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

// BinlogMode is what an exit does with a MySQL binlog dump on a mux link (binlog.go).
type BinlogMode string

const (
	// BinlogRecode zeroes the fields of each event packet the entry recomputes.
	BinlogRecode BinlogMode = "recode"
	// BinlogRaw sends the event packets as they come.
	BinlogRaw BinlogMode = "raw"
)

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

// GroupWait is how long a mux link's frame stays open for more bytes after its first,
// DTLE's GroupTimeout: a one-way stream such as a binlog comes a transaction at a time,
// and a frame per transaction pays zstd's block tables, a TLS record and a packet each
// time, while a frame of several transactions compresses better and pays them once. The
// zero value sends at once (what a request/reply client needs: a wait is added to every
// round trip). A frame is sent when the wait has passed, when a group's worth
// (GroupMaxSize) is ready, or at once when it carries a connection's open, end or reset.
type GroupWait struct {
	// Auto waits GroupWaitAutoShare of the WAN's round trip (the lowest smoothed RTT
	// TCP_INFO showed over the last 10-20 s, rttFloor): a replica's lag grows by at most
	// that share, on any link.
	Auto bool
	D    time.Duration // a fixed wait, when not Auto
}

const (
	// GroupWaitAutoShare is the share of the WAN's round trip that --group-wait auto waits.
	GroupWaitAutoShare = 0.25
	// MaxGroupWait bounds a fixed --group-wait.
	MaxGroupWait = 10 * time.Second
)

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

// String is the --group-wait value of w.
func (w GroupWait) String() string {
	if w.Auto {
		return "auto"
	}
	return w.D.String()
}

// IsZero reports whether w sends at once.
func (w GroupWait) IsZero() bool { return !w.Auto && w.D == 0 }

// at is the wait on a link whose round trip is rtt (0 while unmeasured: no wait).
func (w GroupWait) at(rtt time.Duration) time.Duration {
	if w.Auto {
		return time.Duration(float64(rtt) * GroupWaitAutoShare)
	}
	return w.D
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
