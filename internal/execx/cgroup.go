package execx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// StartInCgroup starts cmd inside the cgroup v2 directory dir: clone3(CLONE_INTO_CGROUP)
// puts the child there before its first instruction, so neither it nor anything it forks
// is ever outside it. dir "" starts cmd where this process runs.
func StartInCgroup(cmd *exec.Cmd, dir string) error {
	if dir == "" {
		return cmd.Start()
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open cgroup %s: %w", dir, err)
	}
	defer syscall.Close(fd)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
	return cmd.Start()
}

// WithCgroup returns a runner whose commands start inside the cgroup v2 directory dir, so
// a helper a command leaves running (a daemon it detaches) stays in it. Once dir is gone
// (its lab was torn down) commands run where this process runs.
func (OS) WithCgroup(dir string) Runner { return cgroupOS{dir: dir} }

type cgroupOS struct{ dir string }

// Run implements Runner.
func (c cgroupOS) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	out, err := runCmd(ctx, c.dir, name, args...)
	if errors.Is(err, os.ErrNotExist) && !isDir(c.dir) {
		return runCmd(ctx, "", name, args...)
	}
	return out, err
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
