package metrics

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// TCClassForm is how a class is named on the command line, for error messages.
const TCClassForm = "DEV:CLASSID, like eth0:1:1"

// TCClass names one traffic-control class: a device and a class id "major:minor" (hex).
type TCClass struct {
	Dev string
	ID  ClassID
}

// ClassID is a tc handle split into its major and minor numbers.
type ClassID struct{ Major, Minor uint16 }

// String is the id as tc prints it: hex, no leading zeros.
func (c ClassID) String() string { return fmt.Sprintf("%x:%x", c.Major, c.Minor) }

func (c TCClass) String() string { return c.Dev + ":" + c.ID.String() }

// ParseTCClass parses DEV:CLASSID. Device names cannot contain ':' (the kernel refuses
// them), so the first ':' ends the device.
func ParseTCClass(s string) (TCClass, error) {
	dev, id, ok := strings.Cut(s, ":")
	if !ok || dev == "" || len(dev) > 15 || strings.ContainsAny(dev, "/ \t") {
		return TCClass{}, fmt.Errorf("class %q: want %s", s, TCClassForm)
	}
	cid, err := ParseClassID(id)
	if err != nil {
		return TCClass{}, fmt.Errorf("class %q: %w; want %s", s, err, TCClassForm)
	}
	return TCClass{Dev: dev, ID: cid}, nil
}

// ParseClassID parses "major:minor" in hex, as tc does; an empty major is 0 (tc prints
// ":1" for the classes of a qdisc with handle 0:).
func ParseClassID(s string) (ClassID, error) {
	maj, min, ok := strings.Cut(s, ":")
	if !ok || min == "" {
		return ClassID{}, fmt.Errorf("class id %q: want major:minor in hex, like 1:1", s)
	}
	var v [2]uint16
	for i, part := range []string{maj, min} {
		if part == "" {
			continue
		}
		n, err := strconv.ParseUint(part, 16, 16)
		if err != nil {
			return ClassID{}, fmt.Errorf("class id %q: %w", s, err)
		}
		v[i] = uint16(n)
	}
	return ClassID{Major: v[0], Minor: v[1]}, nil
}

// TCClassStats is one class of `tc -s class show`: its kind, id and cumulative counters.
type TCClassStats struct {
	Kind           string
	ID             ClassID
	Bytes, Packets uint64
}

// ParseTCClassShow parses `tc -s -j class show dev DEV`. Recent iproute2 prints classes as
// JSON, but 6.1 (Debian 12) and older ignore -j for classes and print text, so both forms
// are read. Empty output is a device with no classes.
func ParseTCClassShow(data []byte) ([]TCClassStats, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, nil
	}
	if trimmed[0] == '[' {
		return parseTCClassJSON(trimmed)
	}
	return parseTCClassText(trimmed)
}

// parseTCClassJSON reads the JSON print_class writes: one object per class with "class"
// (the kind), "handle" and, under -s, "stats" holding "bytes" and "packets".
func parseTCClassJSON(data []byte) ([]TCClassStats, error) {
	var raw []struct {
		Kind   string `json:"class"`
		Handle string `json:"handle"`
		Stats  *struct {
			Bytes   uint64 `json:"bytes"`
			Packets uint64 `json:"packets"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("parse tc class json: %w", err)
	}
	out := make([]TCClassStats, 0, len(raw))
	for _, r := range raw {
		id, err := ParseClassID(r.Handle)
		if err != nil {
			return nil, fmt.Errorf("parse tc class json: %w", err)
		}
		if r.Stats == nil {
			return nil, fmt.Errorf("parse tc class json: class %s has no stats (missing -s?)", r.Handle)
		}
		out = append(out, TCClassStats{Kind: r.Kind, ID: id, Bytes: r.Stats.Bytes, Packets: r.Stats.Packets})
	}
	return out, nil
}

// parseTCClassText reads the text form: a "class KIND ID ..." line, then under -s a
// " Sent N bytes M pkt ..." line for that class.
func parseTCClassText(data []byte) ([]TCClassStats, error) {
	var out []TCClassStats
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 3 && f[0] == "class":
			id, err := ParseClassID(f[2])
			if err != nil {
				return nil, fmt.Errorf("parse tc class line %d: %w", line, err)
			}
			out = append(out, TCClassStats{Kind: f[1], ID: id})
		case len(f) >= 5 && f[0] == "Sent" && f[2] == "bytes" && f[4] == "pkt":
			if len(out) == 0 {
				return nil, fmt.Errorf("parse tc class line %d: counters before any class", line)
			}
			c := &out[len(out)-1]
			var err error
			if c.Bytes, err = strconv.ParseUint(f[1], 10, 64); err != nil {
				return nil, fmt.Errorf("parse tc class line %d bytes: %w", line, err)
			}
			if c.Packets, err = strconv.ParseUint(f[3], 10, 64); err != nil {
				return nil, fmt.Errorf("parse tc class line %d packets: %w", line, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("parse tc class: %w", err)
	}
	return out, nil
}

// findHTBClass returns the HTB class id among classes. wirelab shapes with HTB; a class
// of another kind with the same id (a multiqueue root's per-queue class 1:1 once the
// shaping is gone) carries all of a queue's traffic, not the shaped flow, so it is not it.
func findHTBClass(classes []TCClassStats, id ClassID) (TCClassStats, bool) {
	for _, c := range classes {
		if c.ID == id && c.Kind == "htb" {
			return c, true
		}
	}
	return TCClassStats{}, false
}
