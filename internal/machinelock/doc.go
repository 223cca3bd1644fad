// Package machinelock lets one measurement at a time use the machine: `wirelab run` and
// every study hold an flock(2) on a file in the state dir while they measure, and write who
// they are next to it, so a second one can wait for the first (naming it) or refuse. The
// kernel drops the lock when its holder exits, even on kill -9.
package machinelock
