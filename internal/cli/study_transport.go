package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/inventory"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/study"
)

const transportHelp = `the unix-socket-vs-TCP study: sysbench oltp_read_only (2 threads, 25 point selects,
range 5, no transactions, pareto) over a unix socket, local TCP (127.0.0.1), remote TCP
across the wire, and a remote "socket" through two socat hops, as % of the socket.
The wire defaults to a data-centre round trip (--rtt 0.2ms, no rate cap); every wire flag
applies. Tables default to 4 x 100000 rows (the study used 10 x 1M on a bigger server).
--hosts hosts.yaml: the socket rows on the server host (sysbench there, over its socket and
127.0.0.1), the TCP rows from the client host across the real link, shaped as run --hosts
shapes it; remote-socket's socat hops run one on each host (socat needed on both).
With --engine postgres every row dials the server host's PostgreSQL on its own port.
--quick: 15 s points after a 2 s warm-up`

// transportQuick are --quick's values for the transport study.
var transportQuick = map[string]string{"duration": "15s", "warmup": "2s"}

func studyTransport(p *Process, args []string) error {
	fs := newFlagSet(p, "study transport", transportHelp,
		"wirelab study transport --quick\nwirelab study transport --rtt 0.5ms --paths socket,remote-tcp --duration 60s\n"+
			"wirelab study transport --hosts hosts.yaml --quick --dry-run")
	paths := fs.String("paths", strings.Join(study.TransportPaths, ","), "which paths, a subset of "+strings.Join(study.TransportPaths, ","))
	quick := fs.Bool("quick", false, "15 s points (≤ 5 min here)")
	wf := link.AddFlagsWith(fs, link.Defaults{RTT: "0.2ms"})
	bf := addBenchFlags(fs, study.BenchDefaults{Threads: "2", Duration: 60 * time.Second, Warmup: 5 * time.Second, Tables: 4, TableSize: 100000})
	bf.hosts = addHostsFlags(fs)
	if err := studyArgs(fs, args, "transport", quick, transportQuick); err != nil {
		return err
	}
	cond, shaper, err := wf.Condition()
	if err != nil {
		return &UsageError{err}
	}
	ps, err := study.ParsePaths(*paths)
	if err != nil {
		return &UsageError{err}
	}
	if err := bf.server.refuse("study transport", "its paths (unix socket, local TCP, socat hops) run on the server's own host, which an existing server's is not"); err != nil {
		return err
	}
	ho, err := bf.hosts.options(p, bf)
	if err != nil {
		return err
	}
	if ho != nil && ho.Inventory.Role(inventory.Server)[0].Existing() {
		return usagef("--hosts %s: study transport: the server is an existing one (server.dsn), and the transport study's paths (unix socket, local TCP, socat hops) run on the server's own host, which wirelab does not log in to; measure it with run or study bandwidth", ho.Inventory.Path)
	}
	spec, err := bf.ready(p, "transport", shaper, cond, false)
	if err != nil {
		return err
	}
	st := study.NewTransport(study.TransportOptions{Bench: bf.bench(spec, shaper), Paths: ps, Link: cond})
	fmt.Fprintf(p.Stderr, "study transport: %d points over %s, about %s\n", st.Total(), cond, st.Estimate())
	return bf.hosts.run(p, ho, st, spec.measure())
}
