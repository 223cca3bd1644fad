package docscheck

import (
	"reflect"
	"testing"
)

func TestInvocations(t *testing.T) {
	for _, c := range []struct {
		line string
		want []Invocation
	}{
		{"wirelab run --rate 20mbit --threads 1,8 [--compression] [--out DIR]   # a comment --not-a-flag",
			[]Invocation{{Words: []string{"run"}, Flags: []string{"rate", "threads", "compression", "out"}}}},
		{"WIRELAB_SERVER_PASSWORD=x wirelab study sync --quick --keep-cpus-awake=false",
			[]Invocation{{Words: []string{"study", "sync"}, Flags: []string{"quick", "keep-cpus-awake"}}}},
		{"wirelab exec client -- sh -c 'sysbench --threads=2 run'",
			[]Invocation{{Words: []string{"exec", "client"}}}},
		{"wirelab up --engine postgres && wirelab exec client -- psql -c 'select 1'",
			[]Invocation{{Words: []string{"up"}, Flags: []string{"engine"}}, {Words: []string{"exec", "client"}}}},
		{"$ bin/wirelab compare results/a results/b --format md | less",
			[]Invocation{{Words: []string{"compare"}, Flags: []string{"format"}}}},
		{"wirelab report [--out DIR] results/<run>/", []Invocation{{Words: []string{"report"}, Flags: []string{"out"}}}},
		{"make run   # wirelab is not here", nil},
		{"sysbench --threads 4 run", nil},
	} {
		got := Invocations(c.line)
		for i := range got {
			got[i].Text = ""
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Invocations(%q) = %+v, want %+v", c.line, got, c.want)
		}
	}
}

func TestHelpFlags(t *testing.T) {
	help := "wirelab x: y\n\nExample:\n  wirelab x --a\n\nFlags:\n  --a string\n    \tthe a (default \"1\")\n  --b-c\n    \tmentions --not-this\n"
	flags, listed := HelpFlags(help)
	if !listed || !reflect.DeepEqual(flags, map[string]bool{"a": true, "b-c": true}) {
		t.Errorf("HelpFlags = %v, %v", flags, listed)
	}
	if _, listed := HelpFlags("Usage: wirelab study NAME [flags]\n\nStudies: bandwidth\n"); listed {
		t.Error("a command group's usage read as listing flags")
	}
}
