package galera

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/mariadb"
)

// ErrMismatch means the two nodes' tables differ.
var ErrMismatch = errors.New("galera nodes differ")

// ApplyTimeout bounds Verify's wait for the replica to apply what the primary committed.
const ApplyTimeout = time.Minute

// Verify waits until the replica has applied every write set the primary has committed,
// then compares CHECKSUM TABLE of every table of the bench database on both nodes. It
// returns the tables compared; ErrMismatch (wrapped) names the first that differ.
func (c *Cluster) Verify(ctx context.Context) ([]string, error) {
	if c.Primary == nil || c.Replica == nil {
		return nil, errors.New("galera verify: the cluster is not running")
	}
	p, r := c.Primary.Server, c.Replica.Server
	if err := c.waitApplied(ctx, ApplyTimeout); err != nil {
		return nil, err
	}
	out, err := p.Exec(ctx, fmt.Sprintf("SELECT table_name FROM information_schema.tables WHERE table_schema=%s AND table_type='BASE TABLE' ORDER BY 1",
		sqlString(mariadb.BenchDB)))
	if err != nil {
		return nil, fmt.Errorf("galera verify: list tables: %w", err)
	}
	tables := strings.Fields(out)
	if len(tables) == 0 {
		return nil, fmt.Errorf("galera verify: the bench database %s has no tables", mariadb.BenchDB)
	}
	sp, err := checksums(ctx, p, tables)
	if err != nil {
		return tables, fmt.Errorf("galera verify: primary: %w", err)
	}
	sr, err := checksums(ctx, r, tables)
	if err != nil {
		return tables, fmt.Errorf("galera verify: replica: %w", err)
	}
	if d := compare(tables, sp, sr); d != "" {
		return tables, fmt.Errorf("galera verify: %w: %s", ErrMismatch, d)
	}
	return tables, nil
}

// waitApplied waits until the replica's last committed seqno reaches the primary's.
func (c *Cluster) waitApplied(ctx context.Context, timeout time.Duration) error {
	want, err := nodeStats(ctx, c.Primary.Server)
	if err != nil {
		return fmt.Errorf("galera verify: %w", err)
	}
	deadline := time.Now().Add(timeout)
	for {
		got, err := nodeStats(ctx, c.Replica.Server)
		if err != nil {
			return fmt.Errorf("galera verify: %w", err)
		}
		if got.LastCommitted >= want.LastCommitted {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("galera verify: the replica applied up to seqno %d, the primary committed %d, after %s",
				got.LastCommitted, want.LastCommitted, timeout)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("galera verify: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// checksums is CHECKSUM TABLE of the bench tables: table -> checksum.
func checksums(ctx context.Context, s *mariadb.Server, tables []string) (map[string]string, error) {
	q := make([]string, len(tables))
	for i, t := range tables {
		q[i] = "`" + mariadb.BenchDB + "`.`" + strings.ReplaceAll(t, "`", "``") + "`"
	}
	out, err := s.Exec(ctx, "CHECKSUM TABLE "+strings.Join(q, ", "))
	if err != nil {
		return nil, err
	}
	return parseChecksums(out), nil
}

// parseChecksums reads CHECKSUM TABLE batch output ("sbtest.sbtest1\t123" per line).
func parseChecksums(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		name, sum, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if !ok {
			continue
		}
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			name = name[i+1:]
		}
		m[name] = sum
	}
	return m
}

// compare returns "" when every table has the same non-NULL checksum on both nodes, else
// the first differences.
func compare(tables []string, p, r map[string]string) string {
	var diffs []string
	for _, t := range tables {
		switch a, b := p[t], r[t]; {
		case a == "" || a == "NULL":
			diffs = append(diffs, t+": no checksum on the primary")
		case a != b:
			if b == "" {
				b = "none"
			}
			diffs = append(diffs, fmt.Sprintf("%s: primary %s, replica %s", t, a, b))
		}
	}
	if len(diffs) > 3 {
		diffs = append(diffs[:3], fmt.Sprintf("and %d more", len(diffs)-3))
	}
	return strings.Join(diffs, "; ")
}
