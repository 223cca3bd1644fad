package cli

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/pgbench"
	"github.com/wirelab/wirelab/internal/study"
)

// driverFlags are --driver and --scale, parsed with the bench flags of run and every
// closed-loop study.
type driverFlags struct {
	driver *string
	scale  *int
}

func addDriverFlags(fs *flag.FlagSet) driverFlags {
	return driverFlags{
		driver: fs.String("driver", study.DriverSysbench, "load driver: sysbench, or pgbench (PostgreSQL's, with --engine postgres; run only: study sync takes pgbench's scripts by --workload)"),
		scale:  addScaleFlag(fs, "--driver pgbench only"),
	}
}

// addScaleFlag is --scale, pgbench's data set, for a command whose load pgbench may
// drive; when says when it applies.
func addScaleFlag(fs *flag.FlagSet, when string) *int {
	return fs.Int("scale", 10, "pgbench's data set, pgbench -i -s (100000 accounts per unit); "+when)
}

// driverSpec is the load a bench runs: its driver, the workload in that driver's terms
// and, for pgbench, the data set's scale.
type driverSpec struct {
	Driver   string
	Workload string
	Scale    int // 0 with sysbench, whose data set is --tables × --table-size
}

// validate checks the driver against the engine and the study, and the workload and
// data-set flags against the driver. fs tells which flags the user gave: a default is
// not a choice, but a flag given for the other driver would be silently ignored, so it
// is refused.
func (d driverFlags) validate(fs *flag.FlagSet, k engine.Kind, studyName, workload string) (driverSpec, error) {
	s := driverSpec{Driver: *d.driver, Workload: workload}
	switch s.Driver {
	case study.DriverSysbench:
		if given(fs, "scale") {
			return s, fmt.Errorf("--scale is pgbench's data set; with --driver sysbench the data set is --tables × --table-size (or add --driver pgbench)")
		}
		if !workloads[workload] {
			hint := ""
			if slices.Contains(pgbench.Builtins, workload) {
				hint = " (" + workload + " is a pgbench script: add --driver pgbench --engine postgres)"
			}
			return s, fmt.Errorf("--workload %q: with --driver sysbench want one of %s%s", workload, keys(workloads), hint)
		}
		return s, nil
	case study.DriverPgbench:
	default:
		return s, fmt.Errorf("--driver %q: want sysbench or pgbench", s.Driver)
	}
	if k != engine.Postgres {
		return s, fmt.Errorf("--driver pgbench: pgbench drives PostgreSQL only; add --engine postgres, or use --driver sysbench with %s", k.Title())
	}
	if studyName != "run" {
		return s, fmt.Errorf("--driver pgbench: study %s runs sysbench only; pgbench drives `wirelab run --engine postgres --driver pgbench`", studyName)
	}
	for _, f := range []string{"tables", "table-size", "rand-type"} {
		if given(fs, f) {
			return s, fmt.Errorf("--%s is sysbench's; with --driver pgbench the data set is --scale and the built-in scripts draw keys uniformly", f)
		}
	}
	if !given(fs, "workload") {
		s.Workload = pgbench.TPCB // pgbench's own default script
	}
	if !slices.Contains(pgbench.Builtins, s.Workload) {
		return s, fmt.Errorf("--workload %q: with --driver pgbench want one of %s", s.Workload, strings.Join(pgbench.Builtins, ", "))
	}
	if *d.scale < 1 || *d.scale > 1000 {
		return s, fmt.Errorf("--scale %d: want 1..1000 (pgbench -i -s: 100000 accounts, about 15 MB, per unit)", *d.scale)
	}
	s.Scale = *d.scale
	return s, nil
}
