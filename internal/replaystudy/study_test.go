package replaystudy

import (
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/replay"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
)

func testOptions() Options {
	return Options{Log: mariadbLog(), Links: []link.Condition{{}, {Delay: 10 * time.Millisecond}},
		Series: []Series{{}, {Compression: true}}, Speed: 1, Data: Data{Dump: "/d/app.sql"}, CheckWire: true, BufferPool: "512M"}
}

// TestStudyWalksEveryWireInEverySeries: the series side by side on each wire, in the
// sweep's order, numbered from 1; then no other point.
func TestStudyWalksEveryWireInEverySeries(t *testing.T) {
	s := New(testOptions())
	var got []string
	for {
		c, ok := s.Next(nil)
		if !ok {
			break
		}
		cell := c.(Cell)
		got = append(got, cell.Label())
		if *cell.Wire() != cell.Link || cell.Expected() != 10*time.Second+resetGuess {
			t.Errorf("%s: wire %v, expected %s", cell.Label(), cell.Wire(), cell.Expected())
		}
		if cell.Index != len(got) || !strings.HasPrefix(cell.sessionsFile(), "sessions-0") {
			t.Errorf("%s: index %d, file %s", cell.Label(), cell.Index, cell.sessionsFile())
		}
	}
	want := []string{"plain at rate unlimited", "compression at rate unlimited",
		"plain at rate unlimited, delay 10ms", "compression at rate unlimited, delay 10ms"}
	if strings.Join(got, " | ") != strings.Join(want, " | ") || s.Total() != 4 {
		t.Errorf("points %q, want %q", got, want)
	}
}

func TestStudyNeeds(t *testing.T) {
	n := New(testOptions()).Needs()
	if len(n.Hosts) != 2 || n.Hosts[0] != lab.Client || n.Servers[0].DB.Engine != engine.MariaDB || n.Servers[0].DB.BufferPool != "512M" ||
		n.Data.Driver != study.DriverNone || n.Condition != (link.Condition{}) || !n.CheckWire || n.Tunnel {
		t.Errorf("needs %+v", n)
	}
	sp := n.Spec
	if sp.Driver != Driver || sp.Workload != "general.log" || sp.Threads[0] != 4 || strings.Join(sp.Series, ",") != "plain,compression" ||
		sp.Extra["speed"] != "1" || sp.Extra["data"] != "dump /d/app.sql" || sp.Extra["statements"] != "204" {
		t.Errorf("spec %+v", sp)
	}
	if len(n.Notes) < 2 || !strings.Contains(n.Notes[1], "dropped and the data's SQL loaded again") {
		t.Errorf("notes %q", n.Notes)
	}
	o := testOptions()
	o.Log, o.Data, o.Links, o.Series = pgLogInfo(), Data{Sysbench: true, Tables: 2, TableSize: 100}, []link.Condition{{}}, []Series{{Tunnel: true}}
	n = New(o).Needs()
	if n.Data != (study.DataSet{Driver: study.DriverSysbench, Workload: sysbenchWorkload, Tables: 2, TableSize: 100}) ||
		n.Servers[0].DB.Engine != engine.Postgres || n.CheckWire || !n.Tunnel || n.Spec.Extra["tunnel"] == "" {
		t.Errorf("sysbench, unshaped, tunnel: %+v", n)
	}
	if !strings.Contains(n.Notes[1], "TEMPLATE") {
		t.Errorf("PostgreSQL's reset: %q", n.Notes[1])
	}
}

func TestExpectedAtEachSpeed(t *testing.T) {
	o := testOptions()
	o.Speed = 4
	if d := o.expected(link.Condition{}); d != 10*time.Second/4+resetGuess {
		t.Errorf("--speed 4: %s", d)
	}
	o.Speed, o.For = replay.SpeedMax, 0
	// 204 statements over 4 sessions side by side, each a round trip of 20 ms and 1 ms.
	if d := o.expected(link.Condition{Delay: 10 * time.Millisecond}); d != 51*21*time.Millisecond+resetGuess {
		t.Errorf("--speed max: %s", d)
	}
	o.Speed, o.For = 1, 3*time.Second
	if d := o.expected(link.Condition{}); d != 3*time.Second+resetGuess {
		t.Errorf("--for 3s: %s", d)
	}
}

// TestCheckPacket: the longest statement is held against the server's
// max_allowed_packet, naming its line; PostgreSQL has no such limit.
func TestCheckPacket(t *testing.T) {
	o := testOptions()
	o.Log.Scan.Longest = replay.LongStatement{Line: 77, Len: 2000, Start: "INSERT INTO t VALUES"}
	env := func(max string) *study.Env {
		return &study.Env{Run: &result.Run{Environment: result.Environment{Server: &result.ServerFacts{Engine: "mariadb",
			Settings: []result.Setting{{Name: "max_allowed_packet", Value: max}}}}}}
	}
	s := New(o)
	if err := s.checkPacket(env("1024")); err == nil || !strings.Contains(err.Error(), "log line 77") || !strings.Contains(err.Error(), "/logs/general.log") {
		t.Errorf("too long: %v", err)
	}
	if err := s.checkPacket(env("16777216")); err != nil {
		t.Errorf("fits: %v", err)
	}
	if err := s.checkPacket(env("lots")); err == nil {
		t.Error("an unreadable max_allowed_packet is taken")
	}
	o.Log = pgLogInfo()
	o.Log.Scan.Longest = replay.LongStatement{Line: 3, Len: 1 << 20}
	if err := New(o).checkPacket(env("1024")); err != nil {
		t.Errorf("PostgreSQL: %v", err)
	}
}
