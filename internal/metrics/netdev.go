package metrics

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// ErrIfaceNotFound means an interface named in Source is absent from the namespace's
// counters; Start returns it early instead of sampling zeros for a whole point.
var ErrIfaceNotFound = errors.New("interface not found")

// IfaceCounters are the cumulative counters of one interface, as the kernel reports them.
type IfaceCounters struct {
	RxBytes, RxPackets, TxBytes, TxPackets uint64
}

// ParseNetDev parses the /proc/net/dev format into counters keyed by interface name.
func ParseNetDev(data []byte) (map[string]IfaceCounters, error) {
	out := make(map[string]IfaceCounters)
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if line <= 2 || strings.TrimSpace(text) == "" { // two header lines
			continue
		}
		name, rest, ok := strings.Cut(text, ":") // names cannot contain ':' (dev_valid_name)
		if !ok {
			return nil, fmt.Errorf("parse net/dev line %d %q: no colon", line, text)
		}
		f := strings.Fields(rest)
		if len(f) < 16 {
			return nil, fmt.Errorf("parse net/dev line %d: %d fields, want 16", line, len(f))
		}
		var v [4]uint64
		for i, idx := range []int{0, 1, 8, 9} {
			n, err := strconv.ParseUint(f[idx], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("parse net/dev line %d field %d: %w", line, idx, err)
			}
			v[i] = n
		}
		out[strings.TrimSpace(name)] = IfaceCounters{RxBytes: v[0], RxPackets: v[1], TxBytes: v[2], TxPackets: v[3]}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("parse net/dev: %w", err)
	}
	return out, nil
}

// wireCounts picks the up/down counters out of a namespace's interfaces.
func wireCounts(ifs map[string]IfaceCounters, up, down string, snap *snapshot) error {
	u, ok := ifs[up]
	if !ok {
		return fmt.Errorf("up interface %q: %w", up, ErrIfaceNotFound)
	}
	d, ok := ifs[down]
	if !ok {
		return fmt.Errorf("down interface %q: %w", down, ErrIfaceNotFound)
	}
	snap.upBytes, snap.upPkts = u.TxBytes, u.TxPackets
	snap.downBytes, snap.downPkts = d.TxBytes, d.TxPackets
	return nil
}

// netDevCollector re-reads one open net/dev file every sample. The file was opened inside
// the wire namespace, and a procfs net file stays bound to the namespace it was opened in
// (verified by the root test), so no process and no setns is needed per sample.
type netDevCollector struct {
	f        *os.File
	up, down string
	buf      []byte
}

func (c *netDevCollector) collect(snap *snapshot) error {
	if _, err := c.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("rewind %s: %w", c.f.Name(), err)
	}
	c.buf = c.buf[:0]
	for {
		if len(c.buf) == cap(c.buf) {
			c.buf = append(c.buf, 0)[:len(c.buf)]
		}
		n, err := c.f.Read(c.buf[len(c.buf):cap(c.buf)])
		c.buf = c.buf[:len(c.buf)+n]
		if errors.Is(err, io.EOF) || (err == nil && n == 0) {
			break
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", c.f.Name(), err)
		}
	}
	ifs, err := ParseNetDev(c.buf)
	if err != nil {
		return err
	}
	return wireCounts(ifs, c.up, c.down, snap)
}

func (c *netDevCollector) close() error { return c.f.Close() }

func openFile(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open wire counters: %w", err)
	}
	return f, nil
}
