package result

import (
	"strings"
	"testing"
)

// Each reason a run has no profile is the true one; only an old file is told that a new
// run would record them.
func TestNoProfileWhy(t *testing.T) {
	old, err := Read("testdata/schema1")
	if err != nil {
		t.Fatal(err)
	}
	closed := Point{Study: "bandwidth", TPS: 100}
	tests := []struct {
		name  string
		r     *Run
		pts   []Point
		want  string
		rerun bool
	}{
		{"schema 1", &Run{writtenSchema: 1}, []Point{closed}, "written before schema 2", true},
		// A replication run, of schema 1 or 2, would have none after a re-run either.
		{"replication", old, old.Points, "fixed rate of queries", false},
		{"external server", &Run{Environment: Environment{Server: &ServerFacts{External: true}}}, []Point{closed}, "--server-dsn", false},
		{"nothing completed", &Run{}, []Point{{Study: "bandwidth", Failed: true}}, "no point completed a transaction", false},
		{"has one", &Run{}, []Point{closed, {Study: "bandwidth", TPS: 1, Profile: &Profile{}}}, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			why, rerun := NoProfileWhy(tc.r, tc.pts)
			if !strings.Contains(why, tc.want) || (tc.want == "") != (why == "") || rerun != tc.rerun {
				t.Errorf("%q (re-run helps: %v), want %q (%v)", why, rerun, tc.want, tc.rerun)
			}
		})
	}
}
