package replication

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// ping sizes a new handle's pool and checks that the server lets the user in; on failure
// it closes the handle.
func ping(db *sql.DB, where, user string) (*sql.DB, error) {
	db.SetMaxOpenConns(4)
	db.SetConnMaxIdleTime(time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connect to %s as %s: %w", where, user, err)
	}
	return db, nil
}

// checksumFunc reads a checksum per table: table name -> checksum, "NULL" for a table the
// server does not have.
type checksumFunc func(ctx context.Context, db *sql.DB, tables []Table) (map[string]string, error)

// verify compares the checksums of every table of the pair on both servers.
func verify(ctx context.Context, p *Pair, sums checksumFunc) error {
	src, err := sums(ctx, p.SrcDB, p.Tables)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	rep, err := sums(ctx, p.RepDB, p.Tables)
	if err != nil {
		return fmt.Errorf("replica: %w", err)
	}
	if d := CompareChecksums(TableNames(p.Tables), src, rep); d != "" {
		return fmt.Errorf("%w: %s", ErrMismatch, d)
	}
	return nil
}

// CompareChecksums returns "" when every table has the same non-NULL checksum on both
// sides, or a short description of the first differences.
func CompareChecksums(tables []string, src, rep map[string]string) string {
	var diffs []string
	for _, t := range tables {
		s, r := src[t], rep[t]
		switch {
		case s == "" || s == "NULL":
			diffs = append(diffs, t+": no checksum on the source")
		case s != r:
			diffs = append(diffs, fmt.Sprintf("%s: source %s, replica %s", t, s, orNone(r)))
		}
	}
	if len(diffs) > 3 {
		diffs = append(diffs[:3], fmt.Sprintf("and %d more", len(diffs)-3))
	}
	return strings.Join(diffs, "; ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
