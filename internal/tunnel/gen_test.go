package tunnel

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
)

// Generators of MySQL-like traffic for tests and benchmarks. They follow sysbench's sbtest
// table (id int, k int, c char(120), pad char(60)) with c and pad made of 11-digit groups
// joined by '-', and the MySQL wire format (3-byte length, sequence id), so ratios measured
// on them are close to what oltp_read_only and row-based replication put on the wire.

// digitGroups is sysbench's sb_rand_str("###########-###########-...") for n groups.
func digitGroups(r *rand.Rand, n int) []byte {
	b := make([]byte, 0, n*12)
	for i := range n {
		if i > 0 {
			b = append(b, '-')
		}
		for range 11 {
			b = append(b, byte('0'+r.IntN(10)))
		}
	}
	return b
}

type sbRow struct {
	id, k  int
	c, pad []byte
}

func newSbRow(r *rand.Rand, id int) sbRow {
	return sbRow{id: id, k: r.IntN(1_000_000), c: digitGroups(r, 10), pad: digitGroups(r, 5)}
}

// table is a small sbtest with stable rows, so repeated reads return the same bytes, as a
// real server does.
type table struct{ rows []sbRow }

func newTable(r *rand.Rand, n int) *table {
	t := &table{rows: make([]sbRow, n)}
	for i := range t.rows {
		t.rows[i] = newSbRow(r, i+1)
	}
	return t
}

func packet(dst []byte, seq *byte, payload []byte) []byte {
	dst = append(dst, byte(len(payload)), byte(len(payload)>>8), byte(len(payload)>>16), *seq)
	*seq++
	return append(dst, payload...)
}

func lenenc(dst, s []byte) []byte { return append(append(dst, byte(len(s))), s...) }

func colDef(name string) []byte {
	var p []byte
	for _, s := range []string{"def", "sbtest", "sbtest1", "sbtest1", name, name} {
		p = lenenc(p, []byte(s))
	}
	return append(p, 0x0c, 0x08, 0x00, 0x78, 0x00, 0x00, 0x00, 0xfe, 0x00, 0x00, 0x00, 0x00, 0x00)
}

// resultSet is a text-protocol result set of the given columns of rows.
func resultSet(rows []sbRow, cols []string) []byte {
	var out []byte
	seq := byte(1)
	out = packet(out, &seq, []byte{byte(len(cols))})
	for _, c := range cols {
		out = packet(out, &seq, colDef(c))
	}
	eof := []byte{0xfe, 0, 0, 0x22, 0}
	out = packet(out, &seq, eof)
	var p []byte
	for _, r := range rows {
		p = p[:0]
		for _, c := range cols {
			switch c {
			case "id":
				p = lenenc(p, fmt.Appendf(nil, "%d", r.id))
			case "k":
				p = lenenc(p, fmt.Appendf(nil, "%d", r.k))
			case "c":
				p = lenenc(p, r.c)
			case "pad":
				p = lenenc(p, r.pad)
			}
		}
		out = packet(out, &seq, p)
	}
	return packet(out, &seq, eof)
}

func query(sql string) []byte {
	seq := byte(0)
	return packet(nil, &seq, append([]byte{0x03}, sql...))
}

// readOnlyTraffic is n oltp_read_only transactions: per transaction 10 point selects and
// one each of the four 100-row range queries. It returns the request and response
// messages in order (each message is one write by the client or the server).
func readOnlyTraffic(r *rand.Rand, t *table, n int) (reqs, resps [][]byte) {
	return readOnlyPicked(r, t, n, func() int { return r.IntN(len(t.rows)) })
}

// paretoPick is sysbench's --rand-type=pareto (h = 0.2) over n rows: most picks land on
// few hot rows, which different connections then read again.
func paretoPick(r *rand.Rand, n int) func() int {
	exp := math.Log(0.2) / math.Log(0.8)
	return func() int { return min(n-1, int(float64(n)*math.Pow(r.Float64(), exp))) }
}

// readOnlyPicked is readOnlyTraffic with rows (and range starts) chosen by pick.
func readOnlyPicked(r *rand.Rand, t *table, n int, pick func() int) (reqs, resps [][]byte) {
	ok := []byte{7, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0}
	add := func(q string, resp []byte) {
		reqs = append(reqs, query(q))
		resps = append(resps, resp)
	}
	for range n {
		add("BEGIN", ok)
		for range 10 {
			row := t.rows[pick()]
			add(fmt.Sprintf("SELECT c FROM sbtest1 WHERE id=%d", row.id), resultSet([]sbRow{row}, []string{"c"}))
		}
		start := min(pick(), len(t.rows)-101)
		rng := t.rows[start : start+100]
		add(fmt.Sprintf("SELECT c FROM sbtest1 WHERE id BETWEEN %d AND %d", start+1, start+100), resultSet(rng, []string{"c"}))
		add(fmt.Sprintf("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN %d AND %d", start+1, start+100),
			resultSet([]sbRow{{id: 50_000_000 + r.IntN(1000)}}, []string{"id"}))
		add(fmt.Sprintf("SELECT c FROM sbtest1 WHERE id BETWEEN %d AND %d ORDER BY c", start+1, start+100), resultSet(rng, []string{"c"}))
		add(fmt.Sprintf("SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN %d AND %d ORDER BY c", start+1, start+100), resultSet(rng, []string{"c"}))
		add("COMMIT", ok)
	}
	return reqs, resps
}

// binlogTraffic is n row-based replication events as a source sends them to a replica
// (one MySQL packet per event): BEGIN query events, UPDATE_ROWS events carrying the full
// before and after images of an sbtest row with k or c changed, and XID events.
func binlogTraffic(r *rand.Rand, t *table, n int) [][]byte {
	var msgs [][]byte
	pos, ts := uint32(4), uint32(1_700_000_000)
	event := func(typ byte, body []byte) []byte {
		h := make([]byte, 20, 20+len(body)+4)
		h[0] = 0 // OK byte of the binlog network stream
		binary.LittleEndian.PutUint32(h[1:], ts)
		h[5] = typ
		binary.LittleEndian.PutUint32(h[6:], 1)
		size := uint32(19 + len(body) + 4)
		binary.LittleEndian.PutUint32(h[10:], size)
		pos += size
		binary.LittleEndian.PutUint32(h[14:], pos)
		ev := append(append(h, body...), byte(r.IntN(256)), byte(r.IntN(256)), byte(r.IntN(256)), byte(r.IntN(256)))
		seq := byte(1)
		return packet(nil, &seq, ev)
	}
	image := func(b []byte, row sbRow) []byte {
		b = append(b, 0)
		b = binary.LittleEndian.AppendUint32(b, uint32(row.id))
		b = binary.LittleEndian.AppendUint32(b, uint32(row.k))
		b = lenenc(b, row.c)
		return lenenc(b, row.pad)
	}
	for i := 0; i < n; i++ {
		ts += uint32(r.IntN(2))
		msgs = append(msgs, event(2, append([]byte{8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 26, 0}, "\x00\x00std\x04\x21\x00\x21\x00\x08\x00sbtestBEGIN"...)))
		idx := r.IntN(len(t.rows))
		before := t.rows[idx]
		after := before
		if r.IntN(2) == 0 {
			after.k++
		} else {
			after.c = digitGroups(r, 10)
		}
		t.rows[idx] = after
		body := []byte{0x6c, 0, 0, 0, 0, 0, 1, 0, 2, 0, 4, 0xff, 0xff}
		body = image(body, before)
		body = image(body, after)
		msgs = append(msgs, event(31, body))
		msgs = append(msgs, event(16, binary.LittleEndian.AppendUint64(nil, uint64(1000+i))))
	}
	return msgs
}

func concat(msgs [][]byte) []byte {
	var out []byte
	for _, m := range msgs {
		out = append(out, m...)
	}
	return out
}
