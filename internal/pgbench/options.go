package pgbench

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Built-in scripts (pgbench -b NAME); RunArgs uses their short flags.
const (
	TPCB         = "tpcb-like"     // the default: 3 UPDATEs, a SELECT and an INSERT per transaction
	SelectOnly   = "select-only"   // -S: one primary-key SELECT per transaction
	SimpleUpdate = "simple-update" // -N: TPC-B without the contended branch/teller updates
)

// Builtins are the built-in scripts, in the order help texts list them.
var Builtins = []string{TPCB, SelectOnly, SimpleUpdate}

// Statements is how many SQL statements one transaction of a built-in script sends, BEGIN
// and END included (select-only has neither). Each waits for its reply in every query
// mode, so it is the script's round trips per transaction, and TPS × Statements its
// queries per second: pgbench itself reports only transactions. 0 for an unknown script.
func Statements(builtin string) int {
	switch builtin {
	case "", TPCB:
		return 7 // BEGIN, UPDATE accounts, SELECT, UPDATE tellers, UPDATE branches, INSERT history, END
	case SimpleUpdate:
		return 5 // BEGIN, UPDATE accounts, SELECT, INSERT history, END
	case SelectOnly:
		return 1 // SELECT
	}
	return 0
}

// Options is one pgbench invocation.
type Options struct {
	Builtin string // TPCB (default), SelectOnly or SimpleUpdate
	Clients int    // -c, concurrent connections (default 1)
	// Jobs is -j, pgbench's threads; 0 = min(Clients, 4). One thread drives many clients
	// when the wire is slow, but a single thread caps a fast local run.
	Jobs         int
	Time         time.Duration // -T, rounded up to whole seconds
	Transactions int           // -t per client, when Time is 0
	Rate         int           // -R, target transactions/s (0 = as fast as possible)
	Protocol     string        // -M simple (default), extended or prepared
	NoVacuum     bool          // -n: skip the VACUUM before the run
	Progress     int           // -P seconds between progress lines; 0 = 1, negative = none
	Scale        int           // -s for Init (pgbench_accounts has 100000 rows per unit); default 1

	// Where to connect. Host is an address or, starting with '/', a unix socket directory.
	// Password and SSLMode go through the environment: pgbench has no flag for them, and
	// libpq's default sslmode ("prefer") would silently use TLS when the server offers it.
	Host     string
	Port     int
	User     string
	Password string
	DB       string
	SSLMode  string // disable (default), require, verify-full, ...
	// SSLRootCert is the CA file verify-ca and verify-full check the server against.
	SSLRootCert string

	// LatencyLog: pgbench logs every transaction (--log) into a directory Run makes and
	// removes, and Summary.Logged holds their latency from LatencySkip into the run on
	// (the warm-up left out). pgbench itself prints no percentile.
	LatencyLog  bool
	LatencySkip time.Duration
	logPrefix   string // set by Run for LatencyLog: --log-prefix

	NS string // run inside this network namespace ("" = this one)
	// Cgroup is the cgroup v2 directory pgbench starts in ("" = this process's): the lab's,
	// so `wirelab down` finds a pgbench its run left behind.
	Cgroup string
	Binary string // pgbench executable, default: see binaryOrDefault
	// OnStart is called once the process has started, with its pid (pgbench's own: ip
	// netns exec execs), so CPU sampling can find it.
	OnStart func(pid int)
}

// ErrBadOptions is returned before anything runs when Options cannot work.
var ErrBadOptions = errors.New("bad pgbench options")

func (o Options) validate() error {
	switch o.Builtin {
	case "", TPCB, SelectOnly, SimpleUpdate:
	default:
		return errors.Join(ErrBadOptions, fmt.Errorf("unknown built-in script %q", o.Builtin))
	}
	switch o.Protocol {
	case "", "simple", "extended", "prepared":
	default:
		return errors.Join(ErrBadOptions, fmt.Errorf("unknown protocol %q", o.Protocol))
	}
	if o.Clients < 0 || o.Jobs < 0 || o.Transactions < 0 || o.Rate < 0 || o.Time < 0 {
		return errors.Join(ErrBadOptions, errors.New("negative count"))
	}
	if o.Jobs > max(o.Clients, 1) {
		// pgbench refuses: "number of threads (-j) must not exceed number of clients".
		return errors.Join(ErrBadOptions, fmt.Errorf("%d jobs for %d clients", o.Jobs, o.Clients))
	}
	return nil
}

// connArgs are the connection flags; the database name is the positional argument, last.
func (o Options) connArgs() []string {
	var a []string
	if o.Host != "" {
		a = append(a, "-h", o.Host)
	}
	if o.Port > 0 {
		a = append(a, "-p", strconv.Itoa(o.Port))
	}
	if o.User != "" {
		a = append(a, "-U", o.User)
	}
	return a
}

func (o Options) withDB(a []string) []string {
	if o.DB != "" {
		a = append(a, o.DB)
	}
	return a
}

// InitArgs is the argument list that creates and fills the pgbench tables (dropping
// them first), quietly, with server-side primary keys.
func (o Options) InitArgs() []string {
	a := []string{"-i", "-q", "-s", strconv.Itoa(max(o.Scale, 1))}
	return o.withDB(append(a, o.connArgs()...))
}

// RunArgs is the argument list of a benchmark run. It is pure: it neither reads nor
// checks anything.
func (o Options) RunArgs() []string {
	var a []string
	switch o.Builtin {
	case SelectOnly:
		a = append(a, "-S")
	case SimpleUpdate:
		a = append(a, "-N")
	}
	add := func(k string, v int) { a = append(a, k, strconv.Itoa(v)) }
	clients := max(o.Clients, 1)
	add("-c", clients)
	jobs := o.Jobs
	if jobs == 0 {
		jobs = min(clients, 4)
	}
	add("-j", jobs)
	switch {
	case o.Time > 0:
		add("-T", int(math.Ceil(o.Time.Seconds())))
	case o.Transactions > 0:
		add("-t", o.Transactions)
	}
	if o.Rate > 0 {
		add("-R", o.Rate)
	}
	if o.Protocol != "" {
		a = append(a, "-M", o.Protocol)
	}
	if o.NoVacuum {
		a = append(a, "-n")
	}
	switch {
	case o.Progress == 0:
		add("-P", 1)
	case o.Progress > 0:
		add("-P", o.Progress)
	}
	if o.logPrefix != "" {
		a = append(a, "-l", "--log-prefix="+o.logPrefix)
	}
	return o.withDB(append(a, o.connArgs()...))
}

// Env is what pgbench needs in its environment on top of the caller's: the password and
// the sslmode (disable unless asked).
func (o Options) Env() []string {
	mode := o.SSLMode
	if mode == "" {
		mode = "disable"
	}
	env := []string{"PGSSLMODE=" + mode}
	if o.SSLRootCert != "" {
		env = append(env, "PGSSLROOTCERT="+o.SSLRootCert)
	}
	if o.Password != "" {
		env = append(env, "PGPASSWORD="+o.Password)
	}
	return env
}
