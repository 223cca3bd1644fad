package postgres

import (
	"os"
	"testing"
)

// worldSearchableDir is a temp dir user postgres can reach: t.TempDir() lives under a
// 0700 directory. It is removed when the test ends.
func worldSearchableDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "wlpg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}
