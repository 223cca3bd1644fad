package replay

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/querylog"
)

// Target is the server a replay connects to, and how.
type Target struct {
	Engine engine.Kind
	// Socket wins over Host/Port: MariaDB's socket file, PostgreSQL's socket directory
	// (whose file Port names).
	Host   string
	Port   int
	Socket string
	User   string
	// Password never travels on a command line: Run hands it to the child in a private
	// file.
	Password string
	// DB is the database every session uses, unless LogDB and the session's Connect line
	// names one.
	DB    string
	LogDB bool
	// TLS: MariaDB verifies the server against CA (a PEM file) when it is set;
	// PostgreSQL uses sslmode=require (which verifies against CA when it is set, as libpq
	// does). Compress is MySQL's protocol compression (zlib).
	TLS      bool
	CA       string
	Compress bool
}

// Speed scales a log's think times: 1 replays as recorded, N N times faster. SpeedMax (0)
// does not wait at all.
type Speed float64

// SpeedMax replays each statement as soon as the previous one of its session finished.
const SpeedMax Speed = 0

// ParseSpeed reads --speed: a positive number or "max".
func ParseSpeed(s string) (Speed, error) {
	if strings.EqualFold(strings.TrimSpace(s), "max") {
		return SpeedMax, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "x"), 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("%w: --speed %q: want a positive number (1 = as recorded, 10 = ten times faster) or max", ErrBadOptions, s)
	}
	return Speed(f), nil
}

// String is --speed as ParseSpeed reads it.
func (s Speed) String() string {
	if s == SpeedMax {
		return "max"
	}
	return strconv.FormatFloat(float64(s), 'g', -1, 64)
}

// scale is a recorded think time at this speed.
func (s Speed) scale(d time.Duration) time.Duration {
	if s == SpeedMax || d <= 0 {
		return 0
	}
	return time.Duration(float64(d) / float64(s))
}

// DefaultQueueBudget is how many bytes of statements may wait, read from the log and not
// yet replayed, over all sessions together: the reader stops reading when it is full.
// Tens of thousands of statements ahead keep every session fed at any speed.
const DefaultQueueBudget = 32 << 20

// ErrBadOptions is returned, before anything runs, for options that cannot work.
var ErrBadOptions = errors.New("bad replay options")

// Options is one replay: the log, the server, the pace, and where the child runs.
type Options struct {
	Log    string // the log's path on the client host
	Format querylog.Format
	Target Target
	Speed  Speed
	// For stops the replay after this long (0 = until the log ends); what was not
	// replayed is counted.
	For time.Duration
	// SkipBadLines opens the log with a reader that skips a line it cannot read, and
	// counts it; without it such a line ends the replay with its line number.
	SkipBadLines bool
	QueueBudget  int64 // 0 = DefaultQueueBudget
	// SessionsFile gets one JSON line per session as it ends (SessionFigures); "" = none.
	SessionsFile string

	// Binary is the wirelab executable as the client host sees it; Launcher starts it
	// there (nil = this machine).
	Binary   string
	Launcher execx.Launcher
	OnStart  func(pid int) // the child's pid, for CPU sampling
	Logger   *slog.Logger
}

// Validate checks what can be checked before anything runs.
func (o Options) Validate() error {
	var errs []error
	if o.Log == "" {
		errs = append(errs, errors.New("no log file"))
	}
	if !knownFormat(o.Format) {
		errs = append(errs, fmt.Errorf("--format %q: want one of %v", o.Format, querylog.Formats))
	}
	t := o.Target
	if t.Engine != engine.MariaDB && t.Engine != engine.Postgres {
		errs = append(errs, fmt.Errorf("--engine %q: want one of %v", t.Engine, engine.Kinds))
	}
	if t.Socket == "" && (t.Host == "" || t.Port <= 0 || t.Port > 65535) {
		errs = append(errs, fmt.Errorf("--host %q --port %d: want a host and a port 1-65535, or --socket", t.Host, t.Port))
	}
	if t.Engine == engine.Postgres && t.Port <= 0 {
		errs = append(errs, errors.New("--port: PostgreSQL's socket file is named by its port; give it"))
	}
	if t.User == "" {
		errs = append(errs, errors.New("--user is empty"))
	}
	if t.Compress && !t.Engine.HasCompression() {
		errs = append(errs, t.Engine.RefuseCompression("--compress"))
	}
	if o.Speed < 0 {
		errs = append(errs, fmt.Errorf("--speed %s: want a positive number or max", o.Speed))
	}
	if o.For < 0 {
		errs = append(errs, fmt.Errorf("--for %s: must not be negative", o.For))
	}
	if o.QueueBudget < 0 {
		errs = append(errs, fmt.Errorf("--queue-budget %d: must not be negative", o.QueueBudget))
	}
	if len(errs) > 0 {
		return errors.Join(append([]error{ErrBadOptions}, errs...)...)
	}
	return nil
}

func knownFormat(f querylog.Format) bool {
	for _, k := range querylog.Formats {
		if k == f {
			return true
		}
	}
	return false
}

func (o Options) budget() int64 {
	if o.QueueBudget > 0 {
		return o.QueueBudget
	}
	return DefaultQueueBudget
}

// Args is the child's argument list (after the wirelab binary): everything but the
// password, which it reads from passwordFile. It is pure: it neither reads nor checks
// anything.
func (o Options) Args(passwordFile string) []string {
	t := o.Target
	a := []string{childCommand, "--log", o.Log, "--format", string(o.Format), "--engine", string(t.Engine),
		"--user", t.User, "--speed", o.Speed.String()}
	str := func(k, v string) {
		if v != "" {
			a = append(a, "--"+k, v)
		}
	}
	flag := func(k string, on bool) {
		if on {
			a = append(a, "--"+k)
		}
	}
	str("host", t.Host)
	if t.Port > 0 {
		a = append(a, "--port", strconv.Itoa(t.Port))
	}
	str("socket", t.Socket)
	str("password-file", passwordFile)
	str("db", t.DB)
	flag("log-db", t.LogDB)
	flag("tls", t.TLS)
	str("ca", t.CA)
	flag("compress", t.Compress)
	if o.For > 0 {
		a = append(a, "--for", o.For.String())
	}
	flag("skip-bad-lines", o.SkipBadLines)
	if o.QueueBudget > 0 {
		a = append(a, "--queue-budget", strconv.FormatInt(o.QueueBudget, 10))
	}
	str("sessions-file", o.SessionsFile)
	return a
}

// childCommand is the hidden command that runs a replay on the client host.
const childCommand = "__replay"
