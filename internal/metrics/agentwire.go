package metrics

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/wirelab/wirelab/internal/execx"
)

// counts is one direction's cumulative bytes and packets.
type counts struct{ Bytes, Packets uint64 }

// wireSide reads one direction's raw counters. ok is false when the class or interface
// does not exist right now, which is not an error: shaping comes and goes between points.
type wireSide interface {
	read(ctx context.Context) (c counts, ok bool, err error)
	String() string
}

// tcClassSide reads the bytes an HTB class sent, with `tc -s -j class show dev DEV`.
type tcClassSide struct {
	run   execx.Runner
	class TCClass
}

func (s tcClassSide) read(ctx context.Context) (counts, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, ipTimeout)
	defer cancel()
	out, err := s.run.Run(ctx, "tc", "-s", "-j", "class", "show", "dev", s.class.Dev)
	if err != nil {
		if strings.Contains(err.Error(), "Cannot find device") { // an IFB removed with the shaping
			return counts{}, false, nil
		}
		return counts{}, false, fmt.Errorf("read class %s: %w", s.class, err)
	}
	classes, err := ParseTCClassShow(out)
	if err != nil {
		return counts{}, false, fmt.Errorf("read class %s: %w", s.class, err)
	}
	c, ok := findHTBClass(classes, s.class.ID)
	return counts{Bytes: c.Bytes, Packets: c.Packets}, ok, nil
}

func (s tcClassSide) String() string { return "class " + s.class.String() }

// netDevSide reads an interface's counters from /proc/net/dev: what it transmits, or with
// rx what it receives. On the client host the up direction is what its NIC transmits and
// the down direction what it receives (an IFB that shapes ingress counts the same bytes
// as received and as transmitted).
type netDevSide struct {
	path  string
	iface string
	rx    bool
}

func (s netDevSide) read(context.Context) (counts, bool, error) {
	data, err := os.ReadFile(s.path)
	if err != nil {
		return counts{}, false, fmt.Errorf("read %s: %w", s.path, err)
	}
	ifs, err := ParseNetDev(data)
	if err != nil {
		return counts{}, false, err
	}
	c, ok := ifs[s.iface]
	if s.rx {
		return counts{Bytes: c.RxBytes, Packets: c.RxPackets}, ok, nil
	}
	return counts{Bytes: c.TxBytes, Packets: c.TxPackets}, ok, nil
}

func (s netDevSide) String() string {
	if s.rx {
		return "interface " + s.iface + " rx"
	}
	return "interface " + s.iface + " tx"
}

// wireCounter turns one side's raw counters, which vanish when shaping is removed and
// restart from zero when a class is re-created, into a total that only grows: absent
// counts no new bytes, and a counter seen again after an absence, or lower than the last
// read, is a new one whose every byte is new. A class re-created and already past its
// old value between two reads is indistinguishable from one that kept counting; at one
// read a second that needs more traffic in that second than the old class ever carried.
type wireCounter struct {
	side          wireSide
	read, present bool
	last, total   counts
}

// observe folds one read into the total and reports whether presence changed.
func (w *wireCounter) observe(c counts, ok bool) (changed bool) {
	changed = w.read && ok != w.present
	switch {
	case !ok:
	case !w.read: // the baseline
	case !w.present, c.Bytes < w.last.Bytes || c.Packets < w.last.Packets:
		w.total.Bytes += c.Bytes
		w.total.Packets += c.Packets
	default:
		w.total.Bytes += c.Bytes - w.last.Bytes
		w.total.Packets += c.Packets - w.last.Packets
	}
	if ok {
		w.last = c
	}
	w.read, w.present = true, ok
	return changed
}

// checkIfaces fails with ErrIfaceNotFound when an interface the agent is to read is not
// in path: a misspelt name must not sample zeros for hours.
func checkIfaces(path string, names ...string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	ifs, err := ParseNetDev(data)
	if err != nil {
		return err
	}
	for _, n := range names {
		if _, ok := ifs[n]; n != "" && !ok {
			return fmt.Errorf("interface %q: %w", n, ErrIfaceNotFound)
		}
	}
	return nil
}
