//go:build !linux

package metrics

import (
	"errors"
	"os"
)

// ErrNetnsNotFound means the named network namespace has no bind mount under NetnsDir.
var ErrNetnsNotFound = errors.New("network namespace not found")

var errNoNetns = errors.New("network namespaces need linux")

func withNetns(string, func() error) error { return errNoNetns }

func openInNetns(string, string) (*os.File, error) { return nil, errNoNetns }
