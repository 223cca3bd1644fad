package sysbench

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
)

// Database drivers (--db-driver).
const (
	DriverMySQL = "mysql" // MariaDB through libmariadb: the default
	DriverPgSQL = "pgsql" // PostgreSQL through libpq
)

// Options is one sysbench invocation against MariaDB or PostgreSQL.
type Options struct {
	Driver    string // DriverMySQL (default) or DriverPgSQL
	Workload  string // oltp_read_only, oltp_write_only, oltp_read_write, oltp_point_select ...
	Tables    int
	TableSize int
	Threads   int
	Time      time.Duration // run length; rounded up to whole seconds
	Events    int           // stop after this many events (0 = no limit)
	Rate      int           // target transactions/s (0 = as fast as possible)
	RandType  string        // uniform, gaussian, special, pareto
	// Histogram: sysbench prints its latency histogram at the end (--histogram=on), which
	// Summary.Histogram then holds.
	Histogram bool
	// ResetAfter: sysbench prints a report and resets its counters and histogram this long
	// into the run (--report-checkpoints, whole seconds), so the final report's rates,
	// latencies and histogram leave out what came before: a point's warm-up. 0 = never.
	ResetAfter time.Duration

	// Where to connect: Socket wins over Host/Port. For pgsql, Socket is the socket's
	// directory (libpq takes a directory as its host).
	Host     string
	Port     int
	Socket   string
	User     string
	Password string // on the command line (visible in ps) unless HidePassword
	DB       string
	// HidePassword puts the password in a --config-file readable by root alone instead of
	// on the command line, where ps shows it to every user: for an existing server's real
	// password (a lab server's is throw-away).
	HidePassword bool
	configFile   string // set by the runner for HidePassword

	// TLS with mysql needs CertDir: sysbench 1.0.20 loads client-key.pem,
	// client-cert.pem and cacert.pem from its working directory, so the runner runs it
	// there. With pgsql, sysbench has no TLS option: libpq reads PGSSLMODE from the
	// environment (see Env), and CertDir is not needed.
	TLS         bool
	Compression bool
	CertDir     string

	ReportInterval int      // seconds between interval lines; 0 = 1, negative = none
	Extra          []string // more options, e.g. "--point-selects=25"; for every command
	NS             string   // run inside this network namespace ("" = this one)
	Cgroup         string   // cgroup v2 directory to start in ("" = this process's): the lab's
	// Launcher runs sysbench on another host (NS and Cgroup are then not used); nil runs
	// it here, in NS and Cgroup.
	Launcher execx.Launcher

	Binary string // sysbench executable, default "sysbench"
	// OnStart is called once the process has started, with its pid (sysbench's own: ip
	// netns exec execs), so CPU sampling can find it.
	OnStart func(pid int)
}

// TLSFiles are what sysbench 1.0.20 with --mysql-ssl=on loads from its working directory.
var TLSFiles = []string{"client-key.pem", "client-cert.pem", "cacert.pem"}

// ErrBadOptions is returned before anything runs when Options cannot work.
var ErrBadOptions = errors.New("bad sysbench options")

func (o Options) validate() error {
	if o.Workload == "" {
		return errors.Join(ErrBadOptions, errors.New("workload is empty"))
	}
	switch o.driver() {
	case DriverMySQL:
	case DriverPgSQL:
		if o.Compression {
			return errors.Join(ErrBadOptions, errors.New("compression is not available on PostgreSQL: its protocol has none"))
		}
		return nil
	default:
		return errors.Join(ErrBadOptions, fmt.Errorf("unknown db driver %q", o.Driver))
	}
	if o.TLS && o.CertDir == "" {
		return errors.Join(ErrBadOptions, errors.New("TLS needs CertDir (sysbench reads the .pem files from its working directory)"))
	}
	if o.TLS && o.launcher().Local() {
		// Without them libmariadb only says "TLS/SSL error: No such file or directory".
		for _, f := range TLSFiles {
			if _, err := os.Stat(filepath.Join(o.CertDir, f)); err != nil {
				return errors.Join(ErrBadOptions, fmt.Errorf("TLS: %w", err))
			}
		}
	}
	return nil
}

// Args is sysbench's argument list for cmd ("prepare", "run" or "cleanup"). Run-only
// options (time, events, rate, report interval, random distribution) are left out of the
// other commands. It is pure: it neither reads nor checks anything.
func (o Options) Args(cmd string) []string {
	d := o.driver()
	a := []string{o.Workload, "--db-driver=" + d}
	add := func(k string, v int) { a = append(a, "--"+k+"="+strconv.Itoa(v)) }
	str := func(k, v string) {
		if v != "" {
			a = append(a, "--"+k+"="+v)
		}
	}
	switch {
	case o.Socket != "" && d == DriverPgSQL:
		str("pgsql-host", o.Socket)
		if o.Port > 0 {
			add("pgsql-port", o.Port) // names the socket file, .s.PGSQL.<port>
		}
	case o.Socket != "":
		// sysbench's default host is "localhost", which makes libmariadb use the socket.
		str("mysql-socket", o.Socket)
	default:
		str(d+"-host", o.Host)
		if o.Port > 0 {
			add(d+"-port", o.Port)
		}
	}
	str(d+"-user", o.User)
	str(d+"-password", o.Password)
	str("config-file", o.configFile)
	str(d+"-db", o.DB)
	if o.TLS && d == DriverMySQL {
		a = append(a, "--mysql-ssl=on")
	}
	if o.Compression && d == DriverMySQL {
		a = append(a, "--mysql-compression=on")
	}
	if o.Tables > 0 {
		add("tables", o.Tables)
	}
	if o.TableSize > 0 {
		add("table-size", o.TableSize)
	}
	if o.Threads > 0 {
		add("threads", o.Threads)
	}
	if cmd == "run" {
		switch {
		case o.Time > 0:
			add("time", int(math.Ceil(o.Time.Seconds())))
		case o.Events > 0:
			add("time", 0) // sysbench's default is 10 s; 0 lets --events end the run
		}
		if o.Events > 0 {
			add("events", o.Events)
		}
		if o.Rate > 0 {
			add("rate", o.Rate)
		}
		switch {
		case o.ReportInterval == 0:
			add("report-interval", 1)
		case o.ReportInterval > 0:
			add("report-interval", o.ReportInterval)
		}
		str("rand-type", o.RandType)
		if o.Histogram {
			a = append(a, "--histogram=on")
		}
		if s := int(math.Round(o.ResetAfter.Seconds())); s > 0 {
			add("report-checkpoints", s)
		}
	}
	a = append(a, o.Extra...)
	return append(a, cmd)
}

func (o Options) driver() string {
	if o.Driver == "" {
		return DriverMySQL
	}
	return o.Driver
}

// Env is what sysbench needs in its environment on top of the caller's. For pgsql it is
// libpq's sslmode, always explicit: libpq's default ("prefer") would use TLS whenever
// the server offers it, and the lab's servers do. For mysql it is nothing.
func (o Options) Env() []string {
	if o.driver() != DriverPgSQL {
		return nil
	}
	if o.TLS {
		return []string{"PGSSLMODE=require"}
	}
	return []string{"PGSSLMODE=disable"}
}

// prepareOptions is o as Prepare runs it: sysbench 1.0.20 prepares tables in parallel,
// one table per thread, so more threads than tables only wait, and more than 8 compete
// for the same small server.
func prepareOptions(o Options) Options {
	o.Threads = max(1, min(o.Tables, 8))
	return o
}

// TableNames are the tables prepare creates for n tables: sbtest1 ... sbtestN (the names
// oltp_common.lua gives them).
func TableNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "sbtest" + strconv.Itoa(i+1)
	}
	return out
}

// launcher is where sysbench runs: Launcher, or this machine in NS and Cgroup.
func (o Options) launcher() execx.Launcher {
	if o.Launcher != nil {
		return o.Launcher
	}
	return execx.Local{NS: o.NS, Cgroup: o.Cgroup}
}
