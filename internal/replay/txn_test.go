package replay

import (
	"testing"

	"github.com/wirelab/wirelab/internal/querylog"
)

func TestTransactions(t *testing.T) {
	ms := int64(1e6)
	type step struct {
		sql  string
		done []txnRec
	}
	// Each statement is sent at i ms and answered at i ms + 0.5 ms, after waiting 0.25 ms.
	tests := []struct {
		name  string
		steps []step
	}{
		{"autocommit statements are transactions of their own", []step{
			{"select 1", []txnRec{{latMs: 0.5, roundTrips: 1}}},
			{"update t set a=1", []txnRec{{latMs: 0.5, roundTrips: 1}}},
		}},
		{"begin to commit, less the waits inside", []step{
			{"begin", nil},
			{"select 1", nil},
			{"update t set a=1", nil},
			// send 0, reply 3.5 ms, three waits of 0.25 ms inside
			{"commit", []txnRec{{latMs: 3.5 - 0.75, roundTrips: 4}}},
		}},
		{"a second begin closes the open transaction", []step{
			{"begin", nil},
			{"select 1", nil},
			{"begin", []txnRec{{latMs: 1.5 - 0.25, roundTrips: 2}}},
			{"rollback", []txnRec{{latMs: 1.5 - 0.25, roundTrips: 2}}},
		}},
		{"autocommit off: the first statement opens one", []step{
			{"set autocommit=0", []txnRec{{latMs: 0.5, roundTrips: 1}}},
			{"select 1", nil},
			{"commit", []txnRec{{latMs: 1.5 - 0.25, roundTrips: 2}}},
			{"select 2", nil},
			{"set autocommit=1", []txnRec{{latMs: 1.5 - 0.25, roundTrips: 2}}},
			{"select 3", []txnRec{{latMs: 0.5, roundTrips: 1}}},
		}},
		{"a commit outside a transaction is one", []step{
			{"commit", []txnRec{{latMs: 0.5, roundTrips: 1}}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tx txState
			for i, s := range tt.steps {
				at := int64(i) * ms
				got := tx.statement(classifyStatement(querylog.MySQL, s.sql), stmtSpan{send: at, reply: at + ms/2, waited: ms / 4, roundTrips: 1})
				if !sameTxns(got, s.done) {
					t.Errorf("step %d %q: %+v, want %+v", i, s.sql, got, s.done)
				}
			}
			if left := tx.end(); len(left) != 0 {
				t.Errorf("left open: %+v", left)
			}
		})
	}
}

func sameTxns(a, b []txnRec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].roundTrips != b[i].roundTrips || a[i].latMs-b[i].latMs > 1e-9 || b[i].latMs-a[i].latMs > 1e-9 {
			return false
		}
	}
	return true
}

// A session that ends inside a transaction counts it as it went.
func TestTransactionLeftOpen(t *testing.T) {
	var tx txState
	tx.statement(classifyStatement(querylog.MySQL, "begin"), stmtSpan{send: 0, reply: 1e6, roundTrips: 1})
	tx.statement(classifyStatement(querylog.MySQL, "select 1"), stmtSpan{send: 2e6, reply: 3e6, roundTrips: 1})
	if got := tx.end(); len(got) != 1 || got[0].roundTrips != 2 || got[0].latMs != 3 {
		t.Errorf("end = %+v", got)
	}
}
