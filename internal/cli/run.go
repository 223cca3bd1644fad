package cli

import (
	"time"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/study"
	"github.com/wirelab/wirelab/internal/tunnel"
)

func cmdRun(p *Process, args []string) error {
	fs := newFlagSet(p, "run", "build a lab, run one series of sysbench (or pgbench) over thread counts across the wire, report, tear down",
		"wirelab run --rate 20mbit --threads 1,8,32 --duration 10s --compression\nwirelab run --rtt 50ms --threads 1,4 --workload oltp_point_select --out /tmp/r1\n"+
			"wirelab run --engine postgres --driver pgbench --workload select-only --scale 10 --rtt 20ms --threads 10")
	wf := link.AddFlags(fs)
	bf := addBenchFlags(fs, study.BenchDefaults{Threads: "1,8,32", Duration: 10 * time.Second, Warmup: 2 * time.Second, Tables: 4, TableSize: 100000})
	compression := fs.Bool("compression", false, "MySQL protocol compression (sysbench --mysql-compression=on, zlib); MariaDB only")
	tls := fs.Bool("tls", false, "TLS between the load driver and the server (sysbench --mysql-ssl=on; sslmode=require on PostgreSQL)")
	channelS := fs.String("channel", string(study.ChannelDirect), "direct, or tunnel: the load driver reaches the server through wirelab's tunnel (entry in the client host, exit in the server host)")
	tf := addTunnelFlags(fs, "auto", tunnel.GroupWait{})
	bf.hosts = addHostsFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("run: unexpected argument %q", fs.Arg(0))
	}
	cond, shaper, err := wf.Condition()
	if err != nil {
		return &UsageError{err}
	}
	channel, err := study.ParseChannel(*channelS)
	if err != nil {
		return &UsageError{err}
	}
	if n := tunnelFlagGiven(fs); n != "" && channel == study.ChannelDirect {
		return usagef("run: --%s sets up the tunnel, and --channel direct uses none: add --channel tunnel or drop it", n)
	}
	topts, err := tf.options()
	if err != nil {
		return &UsageError{err}
	}
	if *compression {
		if err := bf.refuseCompression("--compression"); err != nil {
			return err
		}
	}
	ho, err := bf.hosts.options(p, bf)
	if err != nil {
		return err
	}
	spec, err := bf.ready(p, "run", shaper, cond, *tls)
	if err != nil {
		return err
	}
	st := study.NewRun(study.RunOptions{Bench: bf.bench(spec, shaper), Link: cond, Compression: *compression,
		TLS: *tls, Channel: channel, Tunnel: topts})
	return bf.hosts.run(p, ho, st, spec.measure())
}
