package dbserver

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/execx"
)

// RunClient runs an engine's admin client (name and args: mariadb or psql over the
// server's socket) with r, execx.OS when nil, and returns its output; an error names
// the client and sql, shortened.
func RunClient(ctx context.Context, r execx.Runner, client, sql, name string, args ...string) (string, error) {
	if r == nil {
		r = execx.OS{}
	}
	out, err := r.Run(ctx, name, args...)
	if err != nil {
		return "", fmt.Errorf("%s %q: %w", client, Abbrev(sql), err)
	}
	return string(out), nil
}

// Rows is ParseTable of an admin client's output with a header line, or the client's
// error.
func Rows(out string, err error) ([]map[string]string, error) {
	if err != nil {
		return nil, err
	}
	return ParseTable(out), nil
}

// VersionRow reads the row both engines' bootstraps select, "version<TAB>max_connections",
// and returns the version. A server that runs with fewer connections than want (a file
// descriptor limit) is worth warning about on log: the studies' top thread counts would
// fail to connect.
func VersionRow(out string, want int, log *slog.Logger, warning string) string {
	f := strings.Split(strings.TrimSpace(out), "\t")
	if len(f) > 1 {
		if n, _ := strconv.Atoi(f[1]); n > 0 && n < want && log != nil {
			log.Warn(warning, "want", want, "got", n)
		}
	}
	return f[0]
}
