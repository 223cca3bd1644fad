package postgres

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
)

// ErrNotInstalled means no PostgreSQL server binaries were found.
var ErrNotInstalled = errors.New("postgresql server binaries not found")

// debianRoot is where Debian's packages put each major version: /usr/lib/postgresql/15/bin.
const debianRoot = "/usr/lib/postgresql"

// FindBinDir returns the directory holding initdb, postgres, psql, pg_basebackup and
// pgbench. Debian keeps them out of PATH (PATH has only pg_wrapper for the clients), so
// it prefers the highest version under /usr/lib/postgresql, then the directory of an
// initdb found in PATH.
func FindBinDir() (string, error) {
	return findBinDir(debianRoot, exec.LookPath)
}

func findBinDir(root string, lookPath func(string) (string, error)) (string, error) {
	entries, _ := os.ReadDir(root)
	var versions []int
	for _, e := range entries {
		if v, err := strconv.Atoi(e.Name()); err == nil && isBinDir(filepath.Join(root, e.Name(), "bin")) {
			versions = append(versions, v)
		}
	}
	if len(versions) > 0 {
		sort.Ints(versions)
		return filepath.Join(root, strconv.Itoa(versions[len(versions)-1]), "bin"), nil
	}
	if p, err := lookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if d := filepath.Dir(p); isBinDir(d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w: looked in %s/*/bin and PATH (install postgresql-15)", ErrNotInstalled, root)
}

func isBinDir(d string) bool {
	for _, b := range []string{"initdb", "postgres", "psql"} {
		if fi, err := os.Stat(filepath.Join(d, b)); err != nil || fi.IsDir() {
			return false
		}
	}
	return true
}
