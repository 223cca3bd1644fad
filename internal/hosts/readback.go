package hosts

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/wirelab/wirelab/internal/link"
)

// readMark starts each part of the read-back script's output: "@@wirelab qdisc eth0".
const readMark = "@@wirelab "

// Read reads the link's shaping back through its host, in one command, and compares it
// with the plan of the last Shape (link.MissingTC, link.MissingRules): the qdiscs and
// HTB classes of the NIC and its IFB, and with the delay line its rules and its delayer.
// The reading's Classes and Bytes are the plan's shaped classes that are there and what
// they have counted so far. Before any Shape it reads nothing and finds nothing missing.
func (l *RemoteLink) Read(ctx context.Context) (link.Reading, error) {
	l.mu.Lock()
	p := l.plan
	l.mu.Unlock()
	want := link.PlannedTC(p.Apply)
	delayLine := p.Shaper.Uses(link.ShaperNfqueue) && len(p.Apply) > 0
	if len(want) == 0 && !delayLine {
		return link.Reading{}, nil
	}
	var script strings.Builder
	for _, dev := range link.Devices(want) {
		d := ShellQuote(dev)
		fmt.Fprintf(&script, "echo '%sqdisc %s'; tc qdisc show dev %s 2>&1; echo '%sclass %s'; tc -s class show dev %s 2>&1; ",
			readMark, dev, d, readMark, dev, d)
	}
	if delayLine {
		fmt.Fprintf(&script, "echo '%srules'; %s -t mangle -S 2>&1; echo '%sdelayer'; p=$(cat %s 2>/dev/null) && "+
			"tr '\\0' ' ' </proc/\"$p\"/cmdline 2>/dev/null | grep -q -- %s && echo running; ",
			readMark, queueHooks(l.Target.Peer.Is6()).Cmd, readMark, ShellQuote(delayerPidFile(l.Target.NIC)), ShellQuote(delayerMark))
	}
	script.WriteString("exit 0")
	out, err := l.Host.Run(ctx, "sh", "-c", script.String())
	if err != nil {
		return link.Reading{}, fmt.Errorf("host %s: read back the shaping of %s: %w", l.Host.Name(), l.Target.NIC, err)
	}
	return judgeReadBack(want, p.Apply, delayLine, out)
}

// judgeReadBack compares the read-back script's output with the plan's objects (want) and
// commands (apply).
func judgeReadBack(want []link.TCObject, apply [][]string, delayLine bool, out []byte) (link.Reading, error) {
	parts := readParts(out)
	got := map[string][]link.TCObject{}
	for _, dev := range link.Devices(want) {
		q, c := parts["qdisc "+dev], parts["class "+dev]
		if bytes.Contains(q, []byte("Cannot find device")) {
			continue // the device is gone: absent from got
		}
		objs, err := link.ParseTCShow(dev, append(append([]byte(nil), q...), c...))
		if err != nil {
			return link.Reading{}, err
		}
		got[dev] = objs
	}
	r := link.ReadingOf(want, got)
	if delayLine {
		r.Problems = append(r.Problems, link.MissingRules(apply, parts["rules"])...)
		if !bytes.Contains(parts["delayer"], []byte("running")) {
			r.Problems = append(r.Problems, "its delay line's delayer is not running")
		}
	}
	return r, nil
}

// readParts splits the read-back script's output at its marks, by the words after each.
func readParts(out []byte) map[string][]byte {
	parts := map[string][]byte{}
	key := ""
	for _, line := range bytes.SplitAfter(out, []byte("\n")) {
		if k, ok := bytes.CutPrefix(line, []byte(readMark)); ok {
			key = string(bytes.TrimSpace(k))
			parts[key] = nil
			continue
		}
		parts[key] = append(parts[key], line...)
	}
	return parts
}
