package replay

import (
	"errors"
	"fmt"
	"testing"

	"github.com/wirelab/wirelab/internal/stats"
)

// Shapes past ShapeLimit fold into one row, and the summary says so; the percentiles
// are stats' histogram's, on its grid.
func TestCollectorFoldsShapes(t *testing.T) {
	c := newCollector()
	for i := 0; i < ShapeLimit+10; i++ {
		c.statement(stmtRec{class: Class{Kind: KindSelect, Shape: fmt.Sprintf("select c%d from t", i)}, latMs: 1,
			wire: wire{Out: 10, In: 20, RoundTrips: 1}})
	}
	c.statement(stmtRec{class: Class{Kind: KindSelect, Shape: "select c0 from t"}, latMs: 3, wire: wire{RoundTrips: 1},
		err: &serverError{Code: "1146", Msg: "no table"}, line: 7})
	c.statement(stmtRec{class: Class{Kind: KindUpdate, Shape: "update t"}, latMs: 2, err: errors.New("EOF"), line: 9})
	s := c.summary()
	if len(s.Shapes) != ShapeLimit+1 || !s.ShapesFolded {
		t.Fatalf("%d shapes, folded %v; want %d and a folded row", len(s.Shapes), s.ShapesFolded, ShapeLimit+1)
	}
	var other ShapeStat
	for _, sh := range s.Shapes {
		if sh.Shape == OtherShapes {
			other = sh
		}
	}
	if other.Count != 11 || other.BytesOut != 100 { // 10 selects past the limit and the update
		t.Errorf("folded row %+v", other)
	}
	if s.Statements != ShapeLimit+12 || s.Errors != 2 || s.Statement.MaxMs != 3 || s.Statement.P50Ms != stats.BucketOf(1) {
		t.Errorf("summary: %d statements, %d errors, latency %+v", s.Statements, s.Errors, s.Statement)
	}
	byKind := map[StatementKind]KindErrors{}
	for _, e := range s.ErrorsByKind {
		byKind[e.Kind] = e
	}
	if e := byKind[KindSelect]; e.Count != 1 || e.Samples[0] != (ErrorSample{Line: 7, Message: "1146: no table"}) {
		t.Errorf("select errors %+v", e)
	}
	if e := byKind[KindUpdate]; e.Count != 1 || e.Samples[0].Message != "connection lost: EOF" {
		t.Errorf("update errors %+v", e)
	}
}

func TestCollectorTransactionsAndTicks(t *testing.T) {
	c := newCollector()
	for _, rt := range []int64{1, 1, 5, 12} {
		c.transaction(txnRec{latMs: float64(rt), roundTrips: rt})
	}
	c.statement(stmtRec{class: Class{Kind: KindSelect}, latMs: 4, lateMs: 250})
	tk := c.tick(2, 0.5)
	if tk.T != 2 || tk.StatementsPerS != 2 || tk.TransactionsPerS != 8 || tk.LatP95Ms != stats.BucketOf(4) || tk.BehindS != 0.25 {
		t.Errorf("tick %+v", tk)
	}
	if tk := c.tick(3, 1); tk.StatementsPerS != 0 || tk.TransactionsPerS != 0 {
		t.Errorf("a second without anything: %+v", tk)
	}
	s := c.summary()
	want := []Tally{{1, 2}, {5, 1}, {12, 1}}
	if s.Transactions != 4 || s.RoundTrips.PerTransaction != 19.0/4 || fmt.Sprint(s.RoundTrips.ByTransaction) != fmt.Sprint(want) {
		t.Errorf("transactions %d, round trips %+v", s.Transactions, s.RoundTrips)
	}
	if s.Transaction.P50Ms != stats.BucketOf(1) || s.Transaction.MaxMs != 12 || s.Behind.MaxS != 0.25 {
		t.Errorf("transaction latency %+v, behind %+v", s.Transaction, s.Behind)
	}
}
