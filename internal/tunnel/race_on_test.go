//go:build race

package tunnel

// raceEnabled: the race detector slows encoding and syscalls several-fold, so tests that
// judge timing (auto mode's blocked writes) cannot tell a slow WAN from a slow sender.
const raceEnabled = true
