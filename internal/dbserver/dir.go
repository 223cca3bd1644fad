package dbserver

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// UserIDs looks up the uid and gid of the OS user a server runs as.
func UserIDs(name string) (uid, gid int, err error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, fmt.Errorf("look up OS user %s: %w", name, err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid, nil
}

// CheckTraversable fails early when osUser could not reach dir: t.TempDir() and
// os.MkdirTemp parents are 0700, and the server would then die with a vague error.
func CheckTraversable(dir, osUser string) error {
	for d := filepath.Dir(filepath.Clean(dir)); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("check %s: %w", d, err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("user %s cannot traverse %s (mode %v): put Dir under a world-searchable path",
				osUser, d, fi.Mode().Perm())
		}
		if d == "/" {
			return nil
		}
	}
}

// ChownTree gives dir and everything under it to uid:gid.
func ChownTree(dir string, uid, gid int) error {
	return filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(p, uid, gid); err != nil {
			return fmt.Errorf("chown %s: %w", p, err)
		}
		return nil
	})
}

// TailFile returns the last n lines of a log, or why it cannot.
func TailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ListenHosts are the addresses of a comma-separated bind list worth a certificate's
// subject alternative name: wildcards and empties dropped.
func ListenHosts(bind string) []string {
	var out []string
	for _, a := range strings.Split(bind, ",") {
		switch a = strings.TrimSpace(a); a {
		case "0.0.0.0", "::", "*", "":
		default:
			out = append(out, a)
		}
	}
	return out
}

// Dirs are the directories every server keeps under its base directory, whatever the
// engine: the datadir and the TLS certificates.
type Dirs struct {
	Dir, DataDir, CertDir string
}

// DirsIn are the directories of a server whose base directory is dir.
func DirsIn(dir string) Dirs {
	return Dirs{Dir: dir, DataDir: filepath.Join(dir, "data"), CertDir: filepath.Join(dir, "certs")}
}
