package replay

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"
)

// GenOptions shape a synthetic MariaDB general log of sysbench-like sessions.
type GenOptions struct {
	Lines    int64 // the log's length in lines, exactly (at least 3 + 2 × Sessions + 1)
	Sessions int   // sessions open from the start to the end, interleaved at random
	// Tables and TableSize name sysbench's sbtest1..sbtestN tables and their ids.
	Tables, TableSize int
	// Rate is statements per second of log time (default 1000): the log spans
	// statements / Rate seconds.
	Rate  float64
	Start time.Time // the first line's clock time (default 2026-01-01 00:00:00 UTC)
	Seed  uint64
}

// GenStats is what a generated log holds.
type GenStats struct {
	Lines, Statements, Transactions int64
}

// genTxn is one transaction of the mix, sysbench oltp_read_write's shape at a smaller
// size: BEGIN, point and range selects, an index and a non-index update, a delete and an
// insert of one row, COMMIT. One in four transactions is a lone autocommit point select.
var genTxn = []string{
	"BEGIN",
	"SELECT c FROM sbtest%[1]d WHERE id=%[2]d",
	"SELECT c FROM sbtest%[1]d WHERE id=%[3]d",
	"SELECT c FROM sbtest%[1]d WHERE id BETWEEN %[2]d AND %[4]d",
	"SELECT SUM(k) FROM sbtest%[1]d WHERE id BETWEEN %[2]d AND %[4]d",
	"SELECT DISTINCT c FROM sbtest%[1]d WHERE id BETWEEN %[2]d AND %[4]d ORDER BY c",
	"UPDATE sbtest%[1]d SET k=k+1 WHERE id=%[2]d",
	"UPDATE sbtest%[1]d SET c='%[6]s' WHERE id=%[3]d",
	"DELETE FROM sbtest%[1]d WHERE id=%[5]d",
	"INSERT INTO sbtest%[1]d (id, k, c, pad) VALUES (%[5]d, %[2]d, '%[6]s', '%[7]s')",
	"COMMIT",
}

// genSession is one session's place in the mix.
type genSession struct {
	id   int
	step int // index in genTxn of its next statement; -1 = between transactions
	args []any
}

// GenerateGeneralLog writes a MariaDB 10.11 general log (its header, tab-separated lines,
// the time printed when the second changes) of o.Sessions sessions running the mix
// against sysbench's tables, exactly o.Lines lines long. A session deletes and re-inserts
// only ids of its own (id ≡ its index mod Sessions), so a replay onto sysbench's tables
// makes no duplicate keys.
func GenerateGeneralLog(w io.Writer, o GenOptions) (GenStats, error) {
	if o.Sessions < 1 || o.Tables < 1 || o.TableSize < 2*o.Sessions || o.Lines < int64(4+2*o.Sessions) {
		return GenStats{}, errors.New("generate: want Sessions ≥ 1, Tables ≥ 1, TableSize ≥ 2 × Sessions and Lines ≥ 4 + 2 × Sessions")
	}
	if o.Rate <= 0 {
		o.Rate = 1000
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	g := &genWriter{w: bw, start: o.Start, last: -1}
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	fmt.Fprint(bw, "/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1 (Debian 12). started with:\n"+
		"Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\nTime\t\t    Id Command\tArgument\n")
	st := GenStats{Lines: 3}
	sessions := make([]genSession, o.Sessions)
	for i := range sessions {
		sessions[i] = genSession{id: 100 + i, step: -1}
		g.line(0, sessions[i].id, "Connect", "sbtest@198.18.1.2 on sbtest using TCP/IP")
	}
	st.Lines += int64(o.Sessions)
	statements := o.Lines - st.Lines - int64(o.Sessions)
	for n := int64(0); n < statements; n++ {
		s := &sessions[rng.IntN(len(sessions))]
		at := time.Duration(float64(n) / o.Rate * float64(time.Second))
		sql, txnDone := s.next(rng, o, len(sessions))
		g.line(at, s.id, "Query", sql)
		if txnDone {
			st.Transactions++
		}
	}
	st.Statements = statements
	end := time.Duration(float64(statements) / o.Rate * float64(time.Second))
	for i := range sessions {
		g.line(end, sessions[i].id, "Quit", "")
	}
	st.Lines += statements + int64(o.Sessions)
	if err := bw.Flush(); err != nil {
		return st, fmt.Errorf("generate: %w", err)
	}
	return st, g.err
}

// next is the session's next statement, and whether it ends a transaction.
func (s *genSession) next(rng *rand.Rand, o GenOptions, sessions int) (string, bool) {
	if s.step < 0 {
		table := 1 + rng.IntN(o.Tables)
		id := 1 + rng.IntN(o.TableSize-1)
		if rng.IntN(4) == 0 {
			return fmt.Sprintf("SELECT c FROM sbtest%d WHERE id=%d", table, id), true
		}
		own := s.id - 100 + 1 + sessions*rng.IntN(o.TableSize/sessions)
		s.args = []any{table, id, 1 + rng.IntN(o.TableSize), min(id+99, o.TableSize), own,
			randomText(rng, 119), randomText(rng, 59)}
		s.step = 0
	}
	sql := genTxn[s.step]
	if s.step > 0 && s.step < len(genTxn)-1 {
		sql = fmt.Sprintf(sql, s.args...)
	}
	s.step++
	if s.step == len(genTxn) {
		s.step = -1
		return sql, true
	}
	return sql, false
}

// randomText is sysbench's c/pad text: groups of 11 digits joined by dashes, n long.
func randomText(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		if i%12 == 11 {
			b[i] = '-'
		} else {
			b[i] = byte('0' + rng.IntN(10))
		}
	}
	return string(b)
}

// genWriter writes general-log lines, printing the time when its second changes.
type genWriter struct {
	w     *bufio.Writer
	start time.Time
	last  int64 // the last second printed
	err   error
}

func (g *genWriter) line(at time.Duration, id int, cmd, arg string) {
	t := g.start.Add(at)
	prefix := "\t\t"
	if sec := t.Unix(); sec != g.last {
		g.last = sec
		prefix = fmt.Sprintf("%02d%02d%02d %2d:%02d:%02d\t", t.Year()%100, int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second())
	}
	if _, err := fmt.Fprintf(g.w, "%s%6d %s\t%s\n", prefix, id, cmd, arg); err != nil && g.err == nil {
		g.err = err
	}
}
