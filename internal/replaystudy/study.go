package replaystudy

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/report"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
)

// Name is the study's name: results.json's "study" and the report's section.
const Name = "replay"

// Driver is the points' "driver": the replayer is their load.
const Driver = "replay"

// sysbenchWorkload is the workload sysbench prepares its tables with (every OLTP
// workload's tables are the same).
const sysbenchWorkload = "oltp_read_write"

// Study is `wirelab replay` as a plug-in of study.Session: a client and a server of the
// log's engine, the data loaded once, then one point per wire of the sweep and series,
// each from the same starting data.
type Study struct {
	o Options
	study.Cells[Cell]
	data  dataSet
	entry string // the tunnel's entry as the client host reaches it, host:port
	log   *slog.Logger
}

// New is the study of o: every wire of the sweep, each in every series (the series side
// by side on one wire, so the wire changes least).
func New(o Options) *Study {
	s := &Study{o: o}
	for _, l := range o.Links {
		for _, se := range o.Series {
			s.Add(Cell{Link: l, Series: se, Index: s.Total() + 1, expected: o.expected(l)})
		}
	}
	return s
}

// Name is "replay".
func (s *Study) Name() string { return Name }

// Needs is a client and a server of the log's engine (or the existing one), the data set
// (sysbench's, prepared by the Session; a dump, loaded in Setup), the first wire, and the
// tunnel when a series goes through it.
func (s *Study) Needs() study.Needs {
	o := s.o
	data := study.DataSet{Driver: study.DriverNone}
	if o.Data.Sysbench {
		data = study.DataSet{Driver: study.DriverSysbench, Workload: sysbenchWorkload, Tables: o.Data.Tables, TableSize: o.Data.TableSize}
	}
	shaped := false
	for _, l := range o.Links {
		shaped = shaped || l.Shaped()
	}
	return study.Needs{Hosts: []string{lab.Client, lab.Server},
		Servers:   []study.Server{{Host: lab.Server, DB: lab.DBOptions{Engine: o.Engine(), BufferPool: o.BufferPool}, Existing: o.Existing}},
		Data:      data,
		Condition: o.Links[0], Shaper: o.Shaper, Congestion: o.Congestion, CheckWire: o.CheckWire && shaped,
		Tunnel: o.UsesTunnel(), Spec: o.spec(), Notes: o.notes()}
}

// spec is what results.json records of the replay asked for.
func (o Options) spec() result.Spec {
	sc := o.Log.Scan
	var series, links []string
	for _, s := range o.Series {
		series = append(series, s.Name())
	}
	for _, l := range o.Links {
		links = append(links, l.String())
	}
	sp := result.Spec{Workload: filepath.Base(o.Log.Path), Threads: []int{int(sc.Sessions)}, DurationS: o.For.Seconds(),
		Series: series, LinkRateBps: o.Links[0].RateBps, LinkDelayMs: float64(o.Links[0].Delay) / float64(time.Millisecond),
		Driver: Driver, Extra: map[string]string{"log": o.Log.Path, "format": string(o.Log.Format), "speed": o.Speed.String(),
			"links": strings.Join(links, " | "), "data": o.Data.String(), "sessions": strconv.FormatInt(sc.Sessions, 10),
			"statements": strconv.FormatInt(sc.Statements, 10), "span_s": strconv.FormatFloat(sc.Span.Seconds(), 'f', -1, 64)}}
	if o.Data.Sysbench {
		sp.Tables, sp.TableSize = o.Data.Tables, o.Data.TableSize
	}
	if o.UsesTunnel() {
		sp.Extra["tunnel"] = o.Tunnel.EntryArgs()
	}
	return sp
}

// notes say what the replay did that a reader of its figures must know.
func (o Options) notes() []string {
	sc := o.Log.Scan
	n := []string{fmt.Sprintf("Replayed %s (%s): %d sessions, %d statements over %s of log time, at --speed %s%s; "+
		"one connection per captured session, statements in order, sent as text to the bench database, as the bench user.",
		o.Log.Path, o.Log.Format, sc.Sessions, sc.Statements, sc.Span.Round(time.Millisecond), o.Speed, forText(o.For)),
		fmt.Sprintf("Every point starts from the same data (%s): %s.", o.Data, resetText(o.Engine()))}
	if sc.WithoutConnect > 0 {
		n = append(n, fmt.Sprintf("%d session(s) were open before the log began (no Connect line): they are replayed from their first statement.", sc.WithoutConnect))
	}
	if sc.NeverConnectedCount > 0 {
		n = append(n, fmt.Sprintf("%d session(s) never connected when captured (failed login): not replayed (--skip-failed-logins).", sc.NeverConnectedCount))
	}
	if sc.BadLines > 0 {
		n = append(n, fmt.Sprintf("%d line(s) of the log could not be read and were skipped (--skip-bad-lines).", sc.BadLines))
	}
	return n
}

func forText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return ", each replay stopped after --for " + d.String()
}

// resetText says how a point's data is put back, per engine.
func resetText(k engine.Kind) string {
	if k == engine.Postgres {
		return "before each point after the first the bench database is dropped and created again from a copy made once the data was in (CREATE DATABASE ... TEMPLATE)"
	}
	return "before each point after the first every table and view of the bench database is dropped and the data's SQL loaded again"
}

// Setup checks the log's longest statement against the server's max_allowed_packet,
// loads the data (the dump; sysbench's tables are prepared by the Session) and keeps its
// snapshot, and starts the tunnel when a series goes through it.
func (s *Study) Setup(ctx context.Context, e *study.Env) error {
	s.log = e.Logger
	if err := s.checkPacket(e); err != nil {
		return err
	}
	d, err := newDataSet(e, s.o)
	if err != nil {
		return err
	}
	s.data = d
	e.Progressf("loading the data every point starts from (%s)", s.o.Data)
	t0 := time.Now()
	if err := d.load(ctx); err != nil {
		return err
	}
	e.Progressf("data loaded and kept in %s", time.Since(t0).Round(time.Millisecond))
	if !s.o.UsesTunnel() {
		return nil
	}
	t := s.o.Tunnel
	t.ServerPort = e.Servers[0].Conn().Port
	if x, ok := e.Servers[0].(*engine.External); ok {
		t.ServerHost = x.Conn().Host // the exit, in the server host, forwards on to it
	}
	s.entry, err = e.Backend.StartTunnel(ctx, e.Self, lab.Client, t)
	return err
}

// checkPacket refuses a log whose longest statement does not fit in the server's
// max_allowed_packet (MySQL's; PostgreSQL has no such limit below its 1 GB).
func (s *Study) checkPacket(e *study.Env) error {
	f := e.Run.Environment.Server
	if f == nil || s.o.Engine() != engine.MariaDB {
		return nil
	}
	for _, st := range f.Settings {
		if st.Name != "max_allowed_packet" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(st.Value))
		if err != nil {
			return fmt.Errorf("the server's max_allowed_packet %q: %w", st.Value, err)
		}
		if err := s.o.Log.Scan.CheckMaxPacket(n); err != nil {
			return fmt.Errorf("%s: %w", s.o.Log.Path, err)
		}
	}
	return nil
}

// tunnelTarget is the tunnel's entry as a host and port.
func (s *Study) tunnelTarget() (string, int, error) {
	host, port, err := net.SplitHostPort(s.entry)
	if err != nil {
		return "", 0, fmt.Errorf("tunnel entry %q: %w", s.entry, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return "", 0, fmt.Errorf("tunnel entry %q: %w", s.entry, err)
	}
	return host, n, nil
}

// Finish adds nothing: the findings are the report's (Headlines prints them).
func (s *Study) Finish(*result.Run) {}

// Headlines are the replay's findings, printed when the run ends.
func (s *Study) Headlines(pts []result.Point) []string { return report.ReplayFindings(pts) }

// Teardown closes the data set's connections (on an existing server, after dropping
// what the replay made there). Idempotent.
func (s *Study) Teardown() {
	if s.data == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.data.close(ctx); err != nil && s.log != nil {
		s.log.Warn("close the replay's data set", "err", err)
	}
	s.data = nil
}
