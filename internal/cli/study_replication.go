package cli

import (
	"flag"
	"fmt"
	"slices"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/flagx"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/remote"
	"github.com/wirelab/wirelab/internal/replication"
	"github.com/wirelab/wirelab/internal/tunnel"
)

const replicationHelp = `the weak-network replication study (DTLE 2021): a source in the server host, a
replica behind the wire (default --rate 2mbit, --rtt 250ms), an oltp_write_only load at a
fixed rate on the source, lag measured with a heartbeat row.
--engine mariadb: GTID + ROW binlog; channels native, native-compressed
(slave_compressed_protocol), tunnel (wirelab tunnel).
--engine postgres: physical streaming replication from a base backup; channels native
and tunnel (PostgreSQL's replication protocol has no compression).
Scenarios: 1 lag vs RTT at --qps; 2 max sustainable load (a search to --precision, probes
repeated near the limit); 3 wire bandwidth by load with no rate cap; 4 (opt-in)
drop the wire mid-load and check that replication heals.
After every point the replica catches up and every table's checksum must match.
--hosts hosts.yaml (MariaDB): the source on the inventory's server, the replica on its
replica host (nic: the NIC shaped toward the server, as a client's in run); see
docs/ssh-hosts.md.
--quick: RTTs 0,100ms,250ms; loads 300,1200,2400; 15 s points, 20 s search probes (≤ 15 min)`

// replicationQuick are --quick's values for the replication study.
var replicationQuick = map[string]string{"rtts": "0,100ms,250ms", "loads": "300,1200,2400", "duration": "15s",
	"search-duration": "20s", "abort-lag": "10s", "check-wire": "false"}

// replicationFlags wire the study's own flags (replication.Flags) with the shared ones: the
// engine, the wire (link's; --rate is the cap of scenarios 1, 2 and 4) and the tunnel's knobs.
type replicationFlags struct {
	eng     engineFlag
	study   *replication.Flags
	out     *string
	quick   *bool
	measure *measureFlags
	margin  marginFlag
	link    *link.Flags
	tunnel  *tunnelFlags
	hosts   *hostsFlags
	fs      *flag.FlagSet // for which flags were given
}

func addReplicationFlags(fs *flag.FlagSet) *replicationFlags {
	f := &replicationFlags{
		fs:      fs,
		eng:     addEngineFlag(fs),
		measure: addMeasureFlags(fs),
		margin:  addMarginFlag(fs, marginOfMachine),
		study:   replication.AddFlags(fs),
		out:     addOutFlag(fs, "replication"),
		quick:   fs.Bool("quick", false, "RTTs 0,100ms,250ms; loads 300,1200,2400; 15 s points; 20 s probes; no wire check"),
		link:    link.AddFlagsWith(fs, link.Defaults{Rate: "2mbit", RTT: "250ms"}),
		tunnel:  addTunnelFlags(fs, "zstd", tunnel.GroupWait{Auto: true}),
		hosts:   addHostsFlags(fs),
	}
	fs.Func("rate-cap", "the same as --rate (the wire's cap in scenarios 1, 2 and 4)", func(s string) error { return fs.Set("rate", s) })
	return f
}

func studyReplication(p *Process, args []string) error {
	fs := newFlagSet(p, "study replication", replicationHelp,
		"wirelab study replication --quick\nwirelab study replication --engine postgres --quick\n"+
			"wirelab study replication --channels native,tunnel --scenarios 2 --search-duration 90s\n"+
			"wirelab study replication --hosts hosts.yaml --quick --scenarios 3 --dry-run")
	f := addReplicationFlags(fs)
	o, mo, err := studyPreamble(p, fs, args, "replication", f.quick, replicationQuick, f.out, f.measure, f.options)
	if err != nil {
		return err
	}
	if mo.Margin, err = f.margin.forMachine(p); err != nil {
		return err
	}
	ho, err := f.hostsOptions(p, &o)
	if err != nil {
		return err
	}
	if ho == nil {
		if err := preflight(p, o.Shaper, o.Link); err != nil {
			return err
		}
	}
	fmt.Fprintf(p.Stderr, "study replication: %s, channels %s, scenarios %s, wire %s; results in %s\n",
		o.Engine.Title(), replication.ChannelList(o.Channels), flagx.JoinInts(o.Scenarios), o.Link, mo.Out)
	mo.Command = commandLine("wirelab study replication", args)
	return f.hosts.run(p, ho, replication.New(o), mo)
}

// hostsOptions are the real hosts' options with --hosts (nil without), after refusing,
// before anything is contacted, what the study does not do there: PostgreSQL (its standby
// is a base backup the lab takes) and `link check` (hostsFlags.replica).
func (f *replicationFlags) hostsOptions(p *Process, o *replication.Options) (*remote.Options, error) {
	if on, err := f.hosts.check(); !on || err != nil {
		return nil, err
	}
	if o.Engine != engine.MariaDB {
		return nil, usagef("--hosts: study replication --engine %s runs in the namespace lab only (its standby is a base backup across the wire, which real hosts do not run yet): drop --engine, or drop --hosts", o.Engine)
	}
	return f.hosts.replica(p, o.Engine, &o.CheckWire)
}

// options are the study's Options from every flag, validated before anything touches the
// kernel, each error naming its flag.
func (f *replicationFlags) options() (replication.Options, error) {
	var o replication.Options
	var err error
	if o.Engine, err = f.eng.kind(); err != nil {
		return o, err
	}
	if o.Link, o.Shaper, err = f.link.Condition(); err != nil {
		return o, err
	}
	if o.Tunnel, err = f.tunnel.options(); err != nil {
		return o, err
	}
	if err := f.study.Apply(&o); err != nil {
		return o, err
	}
	if err := o.Validate(); err != nil {
		return o, err
	}
	if n := tunnelFlagGiven(f.fs); n != "" && !slices.Contains(o.Channels, replication.Tunnel) {
		return o, fmt.Errorf("--%s sets up the tunnel, and --channels %s has none: add tunnel to --channels or drop it", n, replication.ChannelList(o.Channels))
	}
	return o, nil
}
