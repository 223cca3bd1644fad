package link

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// TCObject is one qdisc or class of a device, as a plan makes it (PlannedTC) or as the
// kernel reports it (ParseTCShow): what a read-back is compared on.
type TCObject struct {
	Dev   string
	Class bool   // a class; else a qdisc
	Kind  string // htb, pfifo, netem, ingress, noqueue, mq, ...
	// Handle is a qdisc's handle ("1:", "ffff:") or a class's id ("1:1"), as tc prints it.
	Handle string
	// Root: a qdisc at the device's root, or a class right under its qdisc. Parent is the
	// parent class of any other qdisc ("1:1") or class; "" when Root or not said (a plan's
	// ingress qdisc).
	Root   bool
	Parent string
	// RateBps is an HTB class's rate, 0 for anything else.
	RateBps int64
	// Bytes and Packets are what it has sent (tc -s); 0 in a plan.
	Bytes, Packets uint64
}

// What names the object in a sentence: "HTB class 1:1", "pfifo qdisc 10:".
func (o TCObject) What() string {
	if o.Class {
		return strings.ToUpper(o.Kind) + " class " + o.Handle
	}
	return o.Kind + " qdisc " + o.Handle
}

// ParseTCShow reads `tc qdisc show dev DEV` and `tc [-s] class show dev DEV` output (text,
// as iproute2 prints it; either or both, in any order) into the objects of dev. Counter
// lines (" Sent N bytes M pkt ...") belong to the object above them; other detail lines
// are skipped.
func ParseTCShow(dev string, out []byte) ([]TCObject, error) {
	var objs []TCObject
	for i, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && (f[0] == "qdisc" || f[0] == "class"):
			o, err := shownObject(dev, f)
			if err != nil {
				return nil, fmt.Errorf("parse tc show of %s, line %d: %w", dev, i+1, err)
			}
			objs = append(objs, o)
		case len(f) >= 5 && f[0] == "Sent" && f[2] == "bytes" && f[4] == "pkt" && len(objs) > 0:
			o := &objs[len(objs)-1]
			var err error
			if o.Bytes, err = strconv.ParseUint(f[1], 10, 64); err == nil {
				o.Packets, err = strconv.ParseUint(f[3], 10, 64)
			}
			if err != nil {
				return nil, fmt.Errorf("parse tc show of %s, line %d: counters: %w", dev, i+1, err)
			}
		}
	}
	return objs, nil
}

// shownObject reads one "qdisc KIND HANDLE root|parent P ..." or "class KIND ID
// root|parent P ... rate R ..." line.
func shownObject(dev string, f []string) (TCObject, error) {
	o := TCObject{Dev: dev, Class: f[0] == "class", Kind: f[1], Handle: f[2]}
	for i := 3; i < len(f); i++ {
		switch {
		case f[i] == "root":
			o.Root = true
		case f[i] == "parent" && i+1 < len(f):
			o.Parent = f[i+1]
			i++
		case f[i] == "rate" && i+1 < len(f) && o.Class && o.Kind == "htb":
			r, err := ParseRate(f[i+1])
			if err != nil {
				return TCObject{}, fmt.Errorf("class %s: %w", o.Handle, err)
			}
			o.RateBps = r
			i++
		}
	}
	return o, nil
}

// AppliedTC is what a shaper made, from its read-back as Apply returns it (Applied.ReadBack:
// "DEV: qdisc ..." and "DEV: class ..." lines): every object but the kernel's own defaults
// (handle 0:), which are there whether or not anything was shaped.
func AppliedTC(readBack string) ([]TCObject, error) {
	var out []TCObject
	for _, line := range strings.Split(readBack, "\n") {
		dev, rest, ok := strings.Cut(strings.TrimSpace(line), ": ")
		if !ok {
			continue
		}
		objs, err := ParseTCShow(dev, []byte(rest))
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if o.Handle != "0:" {
				out = append(out, o)
			}
		}
	}
	return out, nil
}

// PlannedTC is what a plan's tc commands make: every `tc qdisc|class add|replace` among
// cmds (argv, "tc" first; other commands are skipped), in order. Filters are not objects:
// whether the traffic reached the class is what its counters say.
func PlannedTC(cmds [][]string) []TCObject {
	var out []TCObject
	for _, c := range cmds {
		if len(c) < 5 || c[0] != "tc" || (c[1] != "qdisc" && c[1] != "class") ||
			(c[2] != "add" && c[2] != "replace") || c[3] != "dev" {
			continue
		}
		out = append(out, plannedObject(c[1] == "class", c[4], c[5:]))
	}
	return out
}

// plannedObject reads the words after "dev DEV" of a tc qdisc or class command: where it
// goes, its handle or class id, then its kind and parameters.
func plannedObject(class bool, dev string, w []string) TCObject {
	o := TCObject{Dev: dev, Class: class}
	for i := 0; i < len(w); i++ {
		switch {
		case o.Kind == "" && w[i] == "root":
			o.Root = true
		case o.Kind == "" && i+1 < len(w) && (w[i] == "parent" || w[i] == "handle" || w[i] == "classid"):
			switch w[i] {
			case "parent":
				o.Parent = w[i+1]
			default:
				o.Handle = w[i+1]
			}
			i++
		case o.Kind == "":
			o.Kind = w[i]
			if o.Kind == "ingress" && o.Handle == "" {
				o.Handle = "ffff:"
			}
		case o.Class && o.Kind == "htb" && w[i] == "rate" && i+1 < len(w):
			o.RateBps, _ = ParseRate(w[i+1])
			i++
		}
	}
	// A class whose parent is its qdisc (a handle "1:") is the qdisc's root class, as tc
	// shows it.
	if o.Class && strings.HasSuffix(o.Parent, ":") {
		o.Root, o.Parent = true, ""
	}
	return o
}

// rateSlack is how far a class's rate as read back may be from the plan's: tc keeps
// bytes per second and prints at most three significant digits past a unit (123456789bit
// reads back as 123456Kbit).
const rateSlack = 0.01

// MissingTC compares what a plan made on each device (want) with what the kernel has now
// (got, by device; a device absent from got is gone) and says, one sentence per device,
// what is not as planned: "its HTB class 1:1 on eth0 is gone (qdisc noqueue)", "device
// wlifb-eth0 is gone", "its HTB class 1:1 on eth0 runs at 10mbit, not 20mbit". A missing
// class is named before a missing qdisc: the class is what shapes and counts. Nil when
// every planned object is there.
func MissingTC(want []TCObject, got map[string][]TCObject) []string {
	var out []string
	for _, dev := range Devices(want) {
		now, ok := got[dev]
		if !ok {
			out = append(out, "device "+dev+" is gone")
			continue
		}
		var classes, qdiscs, slow []string
		for _, w := range want {
			if w.Dev != dev {
				continue
			}
			g, found := findTC(now, w)
			switch {
			case !found && w.Class:
				classes = append(classes, w.What())
			case !found:
				qdiscs = append(qdiscs, w.What())
			case w.RateBps > 0 && math.Abs(float64(g.RateBps-w.RateBps)) > rateSlack*float64(w.RateBps):
				slow = append(slow, fmt.Sprintf("its %s on %s runs at %s, not %s", w.What(), dev, FormatRate(g.RateBps), FormatRate(w.RateBps)))
			}
		}
		if gone := append(classes, qdiscs...); len(gone) > 0 {
			out = append(out, fmt.Sprintf("its %s on %s is gone (%s)", gone[0], dev, rootOf(now)))
		} else if len(slow) > 0 {
			out = append(out, slow[0])
		}
	}
	return out
}

// Devices are the devices of objs, in order of first appearance.
func Devices(objs []TCObject) []string {
	var out []string
	seen := map[string]bool{}
	for _, o := range objs {
		if !seen[o.Dev] {
			seen[o.Dev] = true
			out = append(out, o.Dev)
		}
	}
	return out
}

// findTC finds the object of objs that is w: the same kind of thing, kind and handle, in
// the same place where w says where.
func findTC(objs []TCObject, w TCObject) (TCObject, bool) {
	for _, o := range objs {
		if o.Class != w.Class || o.Kind != w.Kind || o.Handle != w.Handle {
			continue
		}
		if (w.Root && !o.Root) || (w.Parent != "" && o.Parent != w.Parent) {
			continue
		}
		return o, true
	}
	return TCObject{}, false
}

// rootOf says what a device carries at its root now: "qdisc noqueue", "no qdisc".
func rootOf(objs []TCObject) string {
	for _, o := range objs {
		if !o.Class && o.Root {
			return "qdisc " + o.Kind
		}
	}
	return "no qdisc"
}

// CountedBytes is what the classes of want (a plan's HTB classes, which carry only the
// shaped flows) have sent so far as got reads them, and how many of them are there.
func CountedBytes(want []TCObject, got map[string][]TCObject) (bytes uint64, classes int) {
	for _, w := range want {
		if !w.Class {
			continue
		}
		if g, ok := findTC(got[w.Dev], w); ok {
			bytes += g.Bytes
			classes++
		}
	}
	return bytes, classes
}

// MissingRules compares the iptables mangle rules a plan adds (cmds: `iptables -t mangle
// -A CHAIN ...` and `-I HOOK n -j CHAIN`; other commands are skipped) with `iptables -t
// mangle -S` as read back (listing), and says what is gone: a chain with fewer rules than
// planned, a jump from a hook that is no longer there. Nil when all are there.
func MissingRules(cmds [][]string, listing []byte) []string {
	want := map[string]int{}
	var chains, jumps []string
	for _, c := range cmds {
		if len(c) < 5 || !strings.HasSuffix(c[0], "tables") || c[1] != "-t" || c[2] != "mangle" {
			continue
		}
		switch {
		case c[3] == "-A":
			if want[c[4]] == 0 {
				chains = append(chains, c[4])
			}
			want[c[4]]++
		case c[3] == "-I" && len(c) >= 8 && c[6] == "-j":
			jumps = append(jumps, "-A "+c[4]+" -j "+c[7])
		}
	}
	have := map[string]int{}
	lines := map[string]bool{}
	for _, l := range strings.Split(string(listing), "\n") {
		l = strings.TrimSpace(l)
		lines[l] = true
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "-A" {
			have[f[1]]++
		}
	}
	var out []string
	for _, ch := range chains {
		if have[ch] < want[ch] {
			out = append(out, fmt.Sprintf("its delay line's rules are gone (chain %s has %d of its %d rules)", ch, have[ch], want[ch]))
		}
	}
	for _, j := range jumps {
		if !lines[j] {
			f := strings.Fields(j)
			out = append(out, fmt.Sprintf("the jump from %s to %s is gone", f[1], f[3]))
		}
	}
	return out
}

// Reading is one shaped link as read back through its host, before or after a point,
// against the plan that shaped it: what a Session judges a point's wire by, in the lab and
// on real hosts alike.
type Reading struct {
	// Link names it in a sentence ("client c1", "the wire"); Host is the lab role whose
	// load crosses it (lab.Client, client2, lab.Replica).
	Link, Host string
	// Problems say what of the plan is not there now, one sentence each; none = as shaped.
	Problems []string
	// Classes is how many of the plan's shaped classes are there, which count only the
	// shaped flows; Bytes what they have sent so far, both directions together.
	Classes int
	Bytes   uint64
	// Gone is how many times, so far, a sample agent found a shaped class missing while it
	// sampled (0 where no agent reads classes).
	Gone uint64
}

// ReadingOf is the reading of a link whose plan made want and whose devices have got now
// (a device absent from got is gone): what is missing (MissingTC), and what the plan's
// shaped classes have counted (CountedBytes).
func ReadingOf(want []TCObject, got map[string][]TCObject) Reading {
	r := Reading{Problems: MissingTC(want, got)}
	r.Bytes, r.Classes = CountedBytes(want, got)
	return r
}
