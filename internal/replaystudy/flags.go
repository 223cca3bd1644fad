package replaystudy

import (
	"flag"
	"fmt"
	"time"

	"github.com/wirelab/wirelab/internal/flagx"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/querylog"
	"github.com/wirelab/wirelab/internal/replay"
	"github.com/wirelab/wirelab/internal/study"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// Flags are the replay's own flags, registered by AddFlags: how the log is read
// (LogChecks), and the series, pace, data and checks of the points (Options). The wire
// (link's sweep), the tunnel's knobs, the server and where results go are the command's.
type Flags struct {
	fs                                     *flag.FlagSet // which flags the user gave
	series, speed, format, dump, pool      string
	channel                                string
	forD                                   time.Duration
	skipBad, skipFailed, prepareSysbench   bool
	checksums, checkWire, tls, compression bool
	tables, tableSize                      int
}

// AddFlags registers the replay's flags on fs.
func AddFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{fs: fs}
	fs.StringVar(&f.format, "format", "", "the log's format: "+formats()+" (default: detected from its first lines)")
	fs.BoolVar(&f.skipBad, "skip-bad-lines", false, "skip a line the log's format cannot read, and count it (default: refuse the log, naming the line)")
	fs.BoolVar(&f.skipFailed, "skip-failed-logins", false, "replay a log with sessions whose captured login failed: they are not replayed, and counted (default: refuse it, naming them)")
	fs.StringVar(&f.series, "series", "", "the series to replay at every wire, "+SeriesForm+" (default: the one --compression, --tls and --channel describe, plain without them)")
	fs.BoolVar(&f.compression, "compression", false, "MySQL protocol compression (zlib); MariaDB logs only; not with --series")
	fs.BoolVar(&f.tls, "tls", false, "TLS between the replayer and the server (sslmode=require on PostgreSQL); not with --series")
	fs.StringVar(&f.channel, "channel", string(study.ChannelDirect), "direct, or tunnel: the replayer reaches the server through wirelab's tunnel; not with --series")
	fs.StringVar(&f.speed, "speed", "1", "think time between a session's statements: 1 = as recorded, N = N times faster, max = none (each session a closed loop)")
	fs.DurationVar(&f.forD, "for", 0, "stop each replay after this long, counting what was not replayed (0 = replay the whole log)")
	fs.StringVar(&f.dump, "dump", "", "a plain SQL dump (mariadb-dump/mysqldump, or pg_dump --no-owner --no-privileges) loaded into the server before the first point: the data every point starts from")
	fs.BoolVar(&f.prepareSysbench, "prepare-sysbench", false, "start every point from sysbench's tables instead of a dump (--tables × --table-size): the self-test of a log captured from sysbench")
	fs.IntVar(&f.tables, "tables", 4, "with --prepare-sysbench: sysbench --tables")
	fs.IntVar(&f.tableSize, "table-size", 10000, "with --prepare-sysbench: sysbench --table-size (rows per table)")
	fs.BoolVar(&f.checksums, "checksums", false, "record every table's checksum after each point's replay in results.json (MariaDB CHECKSUM TABLE; PostgreSQL an md5 of the rows in key order)")
	fs.BoolVar(&f.checkWire, "check-wire", true, "measure the wire (RTT, loss, iperf3) after every change of it and record it")
	fs.StringVar(&f.pool, "buffer-pool", "512M", "the server's data cache: innodb_buffer_pool_size (MariaDB) or shared_buffers (PostgreSQL)")
	return f
}

func formats() string {
	s := ""
	for i, f := range querylog.Formats {
		if i > 0 {
			s += ", "
		}
		s += string(f)
	}
	return s
}

// LogChecks are how the log is to be read, for CheckLog; --format is checked here.
func (f *Flags) LogChecks() (LogChecks, error) {
	c := LogChecks{SkipBadLines: f.skipBad, SkipFailedLogins: f.skipFailed}
	if f.format != "" {
		ft, err := querylog.ParseFormat(f.format)
		if err != nil {
			return c, fmt.Errorf("--format: %w", err)
		}
		c.Format = ft
	}
	return c, nil
}

// Options checks every replay flag against the log (its engine), each error naming its
// flag, and returns the options; the wire, the tunnel's knobs, the existing server and
// the output directory are the command's to set.
func (f *Flags) Options(log *LogInfo) (Options, error) {
	o := Options{Log: log, SkipBadLines: f.skipBad, Checksums: f.checksums, CheckWire: f.checkWire, For: f.forD}
	var err error
	if o.Series, err = f.seriesList(); err != nil {
		return o, err
	}
	for _, s := range o.Series {
		if err := s.check(log.Engine); err != nil {
			return o, err
		}
	}
	if o.Speed, err = replay.ParseSpeed(f.speed); err != nil {
		return o, err
	}
	if f.forD < 0 {
		return o, fmt.Errorf("--for %s: want 0 (the whole log) or a duration, e.g. 60s", f.forD)
	}
	if o.Data, err = f.data(log); err != nil {
		return o, err
	}
	if err := lab.CheckBufferPool(f.pool); err != nil {
		return o, err
	}
	o.BufferPool = f.pool
	return o, nil
}

// seriesList is --series, or the one series --compression, --tls and --channel describe.
func (f *Flags) seriesList() ([]Series, error) {
	one := flagx.FirstGiven(f.fs, func(n string) bool { return n == "compression" || n == "tls" || n == "channel" })
	if f.series != "" {
		if one != "" {
			return nil, fmt.Errorf("--%s and --series both given: name every series in --series (e.g. --series plain,compression,tls,tunnel)", one)
		}
		return ParseSeries(f.series)
	}
	ch, err := study.ParseChannel(f.channel)
	if err != nil {
		return nil, err
	}
	return []Series{{Compression: f.compression, TLS: f.tls, Tunnel: ch == study.ChannelTunnel}}, nil
}

// data is --dump or --prepare-sysbench: exactly one of them.
func (f *Flags) data(log *LogInfo) (Data, error) {
	sized := flagx.FirstGiven(f.fs, func(n string) bool { return n == "tables" || n == "table-size" })
	switch {
	case f.dump != "" && f.prepareSysbench:
		return Data{}, fmt.Errorf("--dump and --prepare-sysbench both given: every point starts from one data set; give one")
	case f.dump == "" && !f.prepareSysbench:
		return Data{}, fmt.Errorf("no data to replay onto: give --dump FILE.sql (the captured server's schema and data, loaded before the first point) or --prepare-sysbench (sysbench's tables, for a log captured from sysbench)")
	case f.dump != "":
		if sized != "" {
			return Data{}, fmt.Errorf("--%s sizes sysbench's tables; with --dump the data is the dump's: drop it, or use --prepare-sysbench", sized)
		}
		path, err := checkDump(f.dump, log.Engine)
		return Data{Dump: path}, err
	}
	if err := sysbench.CheckDataSet(f.tables, f.tableSize); err != nil {
		return Data{}, err
	}
	return Data{Sysbench: true, Tables: f.tables, TableSize: f.tableSize}, nil
}
