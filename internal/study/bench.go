package study

import (
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// Bench are the knobs the closed-loop studies share.
type Bench struct {
	Driver            string // DriverSysbench ("" too) or DriverPgbench
	Workload          string // a sysbench workload, or a pgbench built-in script
	Scale             int    // pgbench's data set (pgbench -i -s); sysbench's is Tables × TableSize
	Threads           []int
	Duration, Warmup  time.Duration
	Repeat            int
	Tables, TableSize int
	RandType          string      // sysbench only
	Engine            engine.Kind // the server's kind; "" = MariaDB
	BufferPool        string      // the server's data cache (buffer pool, shared_buffers)
	Shaper            link.Shaper // how delay is made ("" = auto)
	Congestion        string      // the lab hosts' TCP congestion control (the forms lab.ResolveCongestion takes)
	// Existing is a server to measure instead of starting one; nil = the lab starts one.
	Existing *engine.External
}

// spec is what results.json records of the knobs; the study adds series, link and extras.
func (b Bench) spec(series []string, c link.Condition) result.Spec {
	d := b.data()
	return result.Spec{Workload: b.Workload, Threads: b.Threads, DurationS: b.Duration.Seconds(),
		WarmupS: b.Warmup.Seconds(), Repeat: b.Repeat, Tables: d.Tables, TableSize: d.TableSize,
		Series: series, LinkRateBps: c.RateBps, LinkDelayMs: float64(c.Delay) / float64(time.Millisecond),
		Driver: driverFor(d).Name(), Scale: d.Scale}
}

// data is the data set the bench's driver prepares: only the knobs that driver uses.
func (b Bench) data() DataSet {
	if b.Driver == DriverPgbench {
		return DataSet{Driver: DriverPgbench, Workload: b.Workload, Scale: b.Scale}
	}
	return DataSet{Driver: DriverSysbench, Workload: b.Workload, Tables: b.Tables, TableSize: b.TableSize}
}

// needs is a client + server lab with one database server and the driver's data set.
func (b Bench) needs(c link.Condition, checkWire bool, spec result.Spec, notes []string) Needs {
	return Needs{Hosts: []string{lab.Client, lab.Server},
		Servers: []Server{{Host: lab.Server, DB: lab.DBOptions{Engine: b.Engine, BufferPool: b.BufferPool},
			Existing: b.Existing}},
		Data:      b.data(),
		Condition: c, Shaper: b.Shaper, Congestion: b.Congestion, CheckWire: checkWire, Spec: spec, Notes: notes}
}

// matrix is an empty matrix with the bench's driver.
func (b Bench) matrix() matrix {
	return matrix{driver: driverFor(b.data())}
}

// repeats calls fn for every repeat (1-based) and thread count, repeats outermost.
func (b Bench) repeats(fn func(repeat, threads int)) {
	for r := 1; r <= max(b.Repeat, 1); r++ {
		for _, t := range b.Threads {
			fn(r, t)
		}
	}
}

// port is the server's TCP port.
func (b Bench) port() int {
	if b.Existing != nil {
		return b.Existing.Conn().Port
	}
	return b.kind().Port()
}

// kind is the server's engine, MariaDB unless set.
func (b Bench) kind() engine.Kind {
	if b.Engine == "" {
		return engine.MariaDB
	}
	return b.Engine
}

// cell is a cell with the bench's workload and timing.
func (b Bench) cell(study, series string, threads, repeat int) LoadCell {
	return LoadCell{Study: study, Series: series, Workload: b.Workload, Threads: threads,
		Duration: b.Duration, Warmup: b.Warmup, Repeat: repeat, RandType: b.RandType}
}
