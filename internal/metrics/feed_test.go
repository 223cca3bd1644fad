package metrics

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

const t0 = int64(1_764_000_000) * int64(time.Second)

// at is an agent line's time: t0 plus s seconds.
func at(s float64) int64 { return t0 + int64(s*float64(time.Second)) }

func TestFeedReportsFromItsFirstLineAndSurvivesRestarts(t *testing.T) {
	f := NewFeed()
	if _, ok := f.Latest(); ok {
		t.Fatal("a feed without lines has a latest line")
	}
	if err := f.Line("  \n"); err != nil {
		t.Errorf("blank line: %v", err)
	}
	if err := f.Line(`{"unix_nano":` + strconv.FormatInt(at(0), 10) + `,"up_bytes":10,"cpu_ticks":4,"machine_ticks":90000,"clk_tck":100}`); err != nil {
		t.Fatal(err)
	}
	if l, _ := f.Latest(); l.UpBytes != 0 || l.CPUTicks != 0 || l.MachineTicks != 0 || l.UnixNano != at(0) {
		t.Errorf("first line reads as zeros: %+v", l)
	}
	push := func(l AgentLine) {
		t.Helper()
		l.ClkTck = 100
		if err := f.Push(l); err != nil {
			t.Fatal(err)
		}
	}
	push(AgentLine{UnixNano: at(1), UpBytes: 110, CPUTicks: 24, MachineTicks: 90050, WireGone: 2})
	push(AgentLine{UnixNano: at(2), UpBytes: 30, CPUTicks: 0, MachineTicks: 90100}) // a new agent
	push(AgentLine{UnixNano: at(3), UpBytes: 80, CPUTicks: 5, MachineTicks: 90150, WireGone: 1})
	l, _ := f.Latest()
	if l.UpBytes != 100+80 || l.CPUTicks != 20+5 || l.MachineTicks != 150 || l.WireGone != 2+1 {
		t.Errorf("after a restart: %+v, want up 180 cpu 25 machine 150, the wire gone 3 times", l)
	}
	if err := f.Push(AgentLine{UnixNano: at(3), ClkTck: 100}); err == nil {
		t.Error("a line not after the latest was accepted")
	}
	if err := f.Line(`{"unix_nano":1,"clk_tck":100,"bogus":1}`); err == nil || !strings.Contains(err.Error(), "feed") {
		t.Errorf("bad line: %v", err)
	}
}

// A Sampler over feeds computes its samples and totals from the agents' cumulative values
// and the agents' clocks: rates over the agent's interval, a late line making the next
// sample span two agent seconds, a silent tick repeating the rate once, a late feed
// reading 0, and a restarted agent counting on.
func TestSamplerOverFeeds(t *testing.T) {
	client, server := NewFeed(), NewFeed()
	push := func(f *Feed, l AgentLine) {
		t.Helper()
		l.ClkTck = 100
		if err := f.Push(l); err != nil {
			t.Fatal(err)
		}
	}
	push(client, AgentLine{UnixNano: at(1), UpBytes: 100, DownBytes: 50, UpPkts: 1, DownPkts: 1, CPUTicks: 10})
	s := NewSampler(Source{Feeds: Feeds{Wire: client, ClientCPU: client, ServerCPU: server, Machine: server},
		ProcRoot: "/nonexistent"}, time.Hour, nil)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	tick := func() Sample {
		t.Helper()
		time.Sleep(2 * time.Millisecond) // a local interval > 0
		n := len(s.samples)
		s.tick(false)
		if len(s.samples) != n+1 {
			t.Fatalf("tick made no sample")
		}
		return s.samples[n]
	}
	check := func(name string, got Sample, up, down, upP, downP, cli, srv, mach float64) {
		t.Helper()
		if !near(got.UpBytesPerS, up) || !near(got.DownBytesPerS, down) || !near(got.UpPktsPerS, upP) ||
			!near(got.DownPktsPerS, downP) || !near(got.CPUClient, cli) || !near(got.CPUServer, srv) || !near(got.CPUTotal, mach) {
			t.Errorf("%s: %+v\nwant up %v down %v pkts %v/%v cpu client %v server %v machine %v", name, got, up, down, upP, downP, cli, srv, mach)
		}
	}

	push(client, AgentLine{UnixNano: at(2), UpBytes: 1100, DownBytes: 550, UpPkts: 11, DownPkts: 6, CPUTicks: 60})
	check("1: one agent second; the server's agent not started", tick(), 1000, 500, 10, 5, 0.5, 0, 0)

	push(server, AgentLine{UnixNano: at(2.3), CPUTicks: 7, MachineTicks: 123456}) // its first line
	push(client, AgentLine{UnixNano: at(3), UpBytes: 3100, DownBytes: 1050, UpPkts: 31, DownPkts: 11, CPUTicks: 160})
	check("2: server's first line reads as zero", tick(), 2000, 500, 20, 5, 1, 0, 0)

	push(server, AgentLine{UnixNano: at(3.3), CPUTicks: 107, MachineTicks: 123606})
	check("3: client line late: its rates held", tick(), 2000, 500, 20, 5, 1, 1, 1.5)

	push(client, AgentLine{UnixNano: at(4), UpBytes: 4100, DownBytes: 1550, UpPkts: 41, DownPkts: 16, CPUTicks: 200})
	push(client, AgentLine{UnixNano: at(5), UpBytes: 6100, DownBytes: 2050, UpPkts: 61, DownPkts: 21, CPUTicks: 260})
	push(server, AgentLine{UnixNano: at(4.3), CPUTicks: 20, MachineTicks: 123806}) // server agent restarted
	check("4: two client lines over two agent seconds", tick(), 1500, 500, 15, 5, 0.5, 0.2, 2)

	check("5: nothing new: held once", tick(), 1500, 500, 15, 5, 0.5, 0.2, 2)
	check("6: still nothing: zero", tick(), 0, 0, 0, 0, 0, 0, 0)

	push(client, AgentLine{UnixNano: at(8), UpBytes: 6400, DownBytes: 2050, UpPkts: 64, DownPkts: 21, CPUTicks: 290})
	check("7: three agent seconds", tick(), 100, 0, 1, 0, 0.1, 0, 0)

	s.Stop()
	tt := s.Totals()
	want := Totals{Elapsed: tt.Elapsed, UpBytes: 6300, DownBytes: 2000, UpPkts: 63, DownPkts: 20,
		CPUClientSec: 2.8, CPUServerSec: 1.2, CPUTotalSec: 3.5}
	if tt.UpBytes != want.UpBytes || tt.DownBytes != want.DownBytes || tt.UpPkts != want.UpPkts || tt.DownPkts != want.DownPkts ||
		!near(tt.CPUClientSec, want.CPUClientSec) || !near(tt.CPUServerSec, want.CPUServerSec) || !near(tt.CPUTotalSec, want.CPUTotalSec) {
		t.Errorf("totals %+v\nwant   %+v", tt, want)
	}
}

func TestSamplerRefusesAFeedAndALocalSourceForOneRole(t *testing.T) {
	f := NewFeed()
	for _, src := range []Source{
		{Feeds: Feeds{Wire: f}, UpIface: "eth0", DownIface: "eth0"},
		{Feeds: Feeds{ServerCPU: f}, ServerPIDs: func() []int { return nil }},
		{Feeds: Feeds{ClientCPU: f}, ClientPIDs: func() []int { return nil }},
	} {
		s := NewSampler(src, time.Second, nil)
		if err := s.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "both given") {
			t.Errorf("Start = %v", err)
			s.Stop()
		}
	}
}
