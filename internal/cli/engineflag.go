package cli

import (
	"flag"

	"github.com/wirelab/wirelab/internal/engine"
)

// engineFlag is --engine, shared by up, run and every study.
type engineFlag struct{ v *string }

func addEngineFlag(fs *flag.FlagSet) engineFlag {
	return engineFlag{fs.String("engine", string(engine.MariaDB), "database server to start: mariadb or postgres")}
}

// kind is the parsed --engine, a usage error naming the accepted values otherwise.
func (f engineFlag) kind() (engine.Kind, error) {
	k, err := engine.Parse(*f.v)
	if err != nil {
		return "", &UsageError{err}
	}
	return k, nil
}
