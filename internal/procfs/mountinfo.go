package procfs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// ErrNoMount is returned when no file system of the kind asked for is mounted.
var ErrNoMount = errors.New("no such file system mounted")

// MountPoint is where the first file system of type fstype ("cgroup2") is mounted, as
// this process sees it (/proc/self/mountinfo).
func (f FS) MountPoint(fstype string) (string, error) {
	b, err := f.ReadFile("self", "mountinfo")
	if err != nil {
		return "", err
	}
	return ParseMountPoint(b, fstype)
}

// ParseMountPoint finds in a mountinfo the mount point of the first file system of type
// fstype; ErrNoMount when there is none.
func ParseMountPoint(mountinfo []byte, fstype string) (string, error) {
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	for sc.Scan() {
		// 36 25 0:31 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) >= 5 && len(qf) >= 1 && qf[0] == fstype {
			return pf[4], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("parse mountinfo: %w", err)
	}
	return "", fmt.Errorf("%s: %w", fstype, ErrNoMount)
}
