package replay

// txState follows one session's transactions: BEGIN/START TRANSACTION opens one,
// COMMIT/ROLLBACK closes it, a second BEGIN closes the open one first (MySQL commits it
// implicitly), and with autocommit off the first statement opens one. Any other
// statement is a transaction of its own.
type txState struct {
	open          bool
	autocommitOff bool
	cur           txn
}

// txn is one transaction so far: clock readings of its first send and its last reply,
// the time its session waited inside it (think time, and any lateness of the replayer),
// and its statements' round trips.
type txn struct {
	send, reply int64
	waited      int64
	roundTrips  int64
}

func (t txn) rec() txnRec {
	return txnRec{latMs: float64(t.reply-t.send-t.waited) / 1e6, roundTrips: t.roundTrips}
}

// stmtSpan is one statement as a transaction sees it.
type stmtSpan struct {
	send, reply int64 // clock readings
	waited      int64 // ns the session waited before sending it
	roundTrips  int64
}

// statement adds one statement and returns the transactions it finished: itself when it
// is a transaction of its own, the open one when it closes it (COMMIT, ROLLBACK, a second
// BEGIN, SET autocommit=1).
func (t *txState) statement(c Class, s stmtSpan) []txnRec {
	var done []txnRec
	switch {
	case c.Kind == KindBegin:
		if t.open {
			done = append(done, t.cur.rec())
		}
		t.start(s)
	case c.Kind == KindCommit || c.Kind == KindRollback:
		if !t.open {
			return []txnRec{single(s)}
		}
		t.add(s)
		t.open = false
		return append(done, t.cur.rec())
	case t.open:
		t.add(s)
	case t.autocommitOff && c.Autocommit == 0:
		t.start(s)
	default:
		done = append(done, single(s))
	}
	switch c.Autocommit {
	case -1:
		t.autocommitOff = true
	case 1:
		t.autocommitOff = false
		if t.open { // SET autocommit=1 commits the open transaction
			t.open = false
			done = append(done, t.cur.rec())
		}
	}
	return done
}

func (t *txState) start(s stmtSpan) {
	t.open = true
	t.cur = txn{send: s.send, reply: s.reply, roundTrips: s.roundTrips}
}

func (t *txState) add(s stmtSpan) {
	t.cur.reply = s.reply
	t.cur.waited += s.waited
	t.cur.roundTrips += s.roundTrips
}

// end closes an open transaction when its session ends (its COMMIT never came): it counts
// as it went.
func (t *txState) end() []txnRec {
	if !t.open {
		return nil
	}
	t.open = false
	return []txnRec{t.cur.rec()}
}

func single(s stmtSpan) txnRec {
	return txn{send: s.send, reply: s.reply, roundTrips: s.roundTrips}.rec()
}
