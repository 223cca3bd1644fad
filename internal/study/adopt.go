package study

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/flagx"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// OpenExisting logs in to an existing server from this machine before any lab is built,
// and refuses a database that already has the tables the data set would create: the
// session drops its tables when it is done (Session.existing), so it must not adopt any
// it did not make. A refused login or such tables are usage errors; an unreachable
// server is not. where names the server's option in errors ("--server-dsn").
func OpenExisting(ctx context.Context, cfg *engine.ExternalConfig, tables int, where string) (*engine.External, error) {
	x, err := engine.OpenExternal(ctx, *cfg)
	if errors.Is(err, engine.ErrLoginRefused) {
		return nil, &flagx.UsageError{Err: fmt.Errorf("%s: %w", where, err)}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	have, err := x.ExistingTables(ctx, sysbench.TableNames(tables))
	if err != nil {
		x.Stop(ctx)
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if len(have) > 0 {
		x.Stop(ctx)
		return nil, flagx.Usagef("%s: database %s on %s already has %s: wirelab creates sbtest1..sbtest%d for its data set and drops them when done, so it leaves tables it did not make alone; name an empty database in the DSN, or drop them if they are a sysbench leftover",
			where, cfg.DSN.DB, cfg.DSN.Addr(), strings.Join(have, ", "), tables)
	}
	return x, nil
}
