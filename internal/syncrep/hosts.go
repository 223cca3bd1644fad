package syncrep

import (
	"fmt"
	"strings"

	"github.com/wirelab/wirelab/internal/engine"
)

// HostsModes are the modes the study runs on real hosts (--hosts): MariaDB's primary and
// replica modes, which the replication study's source and replica hosts carry. A Galera
// cluster needs two more agents and a cluster bootstrap on the hosts, and a PostgreSQL
// standby a base backup taken on a remote replica host: neither is built there.
func HostsModes() []Mode {
	var out []Mode
	for _, m := range ModesFor(engine.MariaDB) {
		if !isGalera(m) {
			out = append(out, m)
		}
	}
	return out
}

// CheckHosts refuses, by name and before anything is contacted, what o asks of real hosts
// that they do not run: --engine postgres, a Galera mode, and --modes left to its default
// (every mode of the engine, Galera's included): the modes are then named, never
// silently dropped. modesGiven says whether --modes was given.
func CheckHosts(o Options, modesGiven bool) error {
	accepted := strings.Join(Names(HostsModes()), ",")
	if o.kind() != engine.MariaDB {
		return fmt.Errorf("--hosts: study sync --engine %s runs in the namespace lab only (the standby is a base backup of the primary taken on the replica host, which real hosts do not run yet): drop --engine, or drop --hosts", o.kind())
	}
	var galera []string
	for _, m := range o.Modes {
		if isGalera(m) {
			galera = append(galera, m.Name())
		}
	}
	switch {
	case !modesGiven:
		return fmt.Errorf("--hosts: --modes is required on real hosts: its default, every MariaDB mode, includes galera and galera-tuned, which run in the namespace lab only; name the modes, a subset of %s (e.g. --modes %s)", accepted, accepted)
	case len(galera) > 0:
		return fmt.Errorf("--hosts: --modes %s: Galera runs in the namespace lab only (a two-node cluster needs two more agents and a cluster bootstrap on the hosts, which are not built); on real hosts --modes takes a subset of %s",
			strings.Join(galera, ","), accepted)
	}
	return nil
}
