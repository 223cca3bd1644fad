package study

import (
	"context"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/result"
)

// Environment describes the machine and the lab for results.json. The replication study
// (internal/replication) runs its own lab of two servers rather than a Plan, and records
// its environment the same way the engine's studies do.
func Environment(ctx context.Context, l *lab.Lab) result.Environment { return environment(ctx, l) }
