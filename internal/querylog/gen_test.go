package querylog

import (
	"io"
	"strconv"
)

// genLog is a synthetic log of a given format, made as it is read (nothing of it is held
// but the entry being read), for the streaming test and the benchmark. Eight sessions
// run at a time, each for 1000 statements, then eight new ones take over; every tenth
// statement is written over several lines.
type genLog struct {
	format Format
	lines  int64 // stop after the entry that reaches this many lines
	n      int64 // lines made so far
	bytes  int64
	entry  int64
	buf    []byte
	off    int
}

func newGenLog(f Format, lines int64) *genLog { return &genLog{format: f, lines: lines} }

func (g *genLog) Read(p []byte) (int, error) {
	for g.off == len(g.buf) {
		if g.n >= g.lines {
			return 0, io.EOF
		}
		g.buf, g.off = g.buf[:0], 0
		g.next()
		g.bytes += int64(len(g.buf))
	}
	n := copy(p, g.buf[g.off:])
	g.off += n
	return n, nil
}

const genRun = 8000 // statements a group of eight sessions runs

func (g *genLog) next() {
	i := g.entry
	g.entry++
	sess := 100 + i%8 + 8*(i/genRun)
	first, last := i%genRun < 8, i%genRun >= genRun-8
	id := i % 997
	multi := i%10 == 9
	start := len(g.buf)
	switch g.format {
	case MySQLGeneral:
		g.general(i, sess, id, first, last, multi)
	case MySQLSlow:
		g.slow(i, sess, id, multi)
	case PGStderr:
		g.stderr(i, sess, id, first, last, multi)
	case PGCSV:
		g.csv(i, sess, id, first, last, multi)
	}
	for _, c := range g.buf[start:] {
		if c == '\n' {
			g.n++
		}
	}
}

func (g *genLog) num(v int64)  { g.buf = strconv.AppendInt(g.buf, v, 10) }
func (g *genLog) str(s string) { g.buf = append(g.buf, s...) }

// sql writes the statement every entry sends, on one line or over three (the lines
// after the first start with cont).
func (g *genLog) sql(multi bool, cont string, id int64) {
	if multi {
		g.str("SELECT c\n" + cont + "  FROM sbtest1\n" + cont + "  WHERE id=")
	} else {
		g.str("SELECT c FROM sbtest1 WHERE id=")
	}
	g.num(id)
}

func (g *genLog) general(i, sess, id int64, first, last, multi bool) {
	head := func() {
		if i%1000 == 0 {
			g.str("261208  0:")
			g.buf = append(g.buf, byte('0'+i/600000%6), byte('0'+i/60000%10), ':', byte('0'+i/10000%6), byte('0'+i/1000%10), '\t')
		} else {
			g.str("\t\t")
		}
		g.str("    ")
		g.num(sess)
	}
	if first {
		head()
		g.str(" Connect\tsbtest@198.18.1.2 on sbtest using TCP/IP\n")
	}
	head()
	if multi {
		g.str(" Query\t")
	} else {
		g.str(" Execute\t")
	}
	g.sql(multi, "", id)
	g.str("\n")
	if last {
		head()
		g.str(" Quit\t\n")
	}
}

func (g *genLog) slow(i, sess, id int64, multi bool) {
	if i%1000 == 0 {
		g.str("# Time: 261208  0:11:56\n")
	}
	g.str("# User@Host: sbtest[sbtest] @  [198.18.1.2]\n# Thread_id: ")
	g.num(sess)
	g.str("  Schema: sbtest  QC_hit: No\n# Query_time: 0.000145  Lock_time: 0.000032  Rows_sent: 1  Rows_examined: 1\n")
	g.str("# Rows_affected: 0  Bytes_sent: 0\nSET timestamp=")
	g.num(1796688696 + i/1000)
	g.str(";\n")
	g.sql(multi, "", id)
	g.str(";\n")
}

// clock writes PostgreSQL's %m, a millisecond every ten entries.
func (g *genLog) clock(i int64) {
	g.str("2026-12-08 00:12:")
	g.buf = append(g.buf, byte('0'+i/100000%6), byte('0'+i/10000%10), '.', byte('0'+i/1000%10), byte('0'+i/100%10), byte('0'+i/10%10))
	g.str(" UTC")
}

func (g *genLog) pgPrefix(i, sess int64) {
	g.clock(i)
	g.str("|sbtest|sbtest|6b174b5a.")
	g.buf = strconv.AppendInt(g.buf, sess, 16)
	g.str("|")
}

func (g *genLog) stderr(i, sess, id int64, first, last, multi bool) {
	if first {
		g.pgPrefix(i, sess)
		g.str("LOG:  connection authorized: user=sbtest database=sbtest\n")
	}
	g.pgPrefix(i, sess)
	if multi {
		g.str("LOG:  statement: ")
		g.sql(multi, "\t", id)
		g.str("\n")
	} else {
		g.str("LOG:  execute sbstmt-1252035341: SELECT c FROM sbtest1 WHERE id=$1\n")
		g.pgPrefix(i, sess)
		g.str("DETAIL:  parameters: $1 = '")
		g.num(id)
		g.str("'\n")
	}
	if last {
		g.pgPrefix(i, sess)
		g.str("LOG:  disconnection: session time: 0:00:00.048 user=sbtest database=sbtest host=198.18.1.2 port=64988\n")
	}
}

func (g *genLog) csv(i, sess, id int64, first, last, multi bool) {
	rec := func(msg, detail string, sql bool) {
		g.clock(i)
		g.str(",\"sbtest\",\"sbtest\",6523,\"[local]\",6b174b5a.")
		g.buf = strconv.AppendInt(g.buf, sess, 16)
		g.str(",4,\"SELECT\",2026-12-08 00:12:24 UTC,3/26,0,LOG,00000,\"")
		g.str(msg)
		if sql {
			g.num(id)
		}
		g.str("\",")
		g.str(detail)
		g.str(",,,,,,,,,\"\",\"client backend\",,0\n")
	}
	if first {
		rec("connection authorized: user=sbtest database=sbtest", "", false)
	}
	if multi {
		rec("statement: SELECT c\n  FROM sbtest1\n  WHERE id=", "", true)
	} else {
		rec("execute sbstmt-1350714351: SELECT c FROM sbtest1 WHERE id=$1", `"parameters: $1 = '51'"`, false)
	}
	if last {
		rec("disconnection: session time: 0:00:00.027 user=sbtest database=sbtest host=[local]", "", false)
	}
}
