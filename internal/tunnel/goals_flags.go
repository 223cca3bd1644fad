package tunnel

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// JudgeFlags are the flags of `wirelab tunnel goals` that judge measurements and print the
// verdicts. scripts/bench-tunnel.sh calls them; they are left out of the command's usage
// line, which is for reading the targets.
type JudgeFlags struct {
	judge, out, command, date, table, summary string
	with                                      stringList
	fs                                        *flag.FlagSet
}

// stringList is a flag that may be given more than once.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// RowsHeader is the first line of a --judge file: one row a bench measured per line after
// it, tab-separated; seconds is the per-second TPS after the warm-up, comma-separated, or
// "-" when the bench kept none.
const RowsHeader = "goal\tcase\tside\trow\tround\ttps\tseconds"

// AddJudgeFlags adds the judging flags to fs.
func AddJudgeFlags(fs *flag.FlagSet) *JudgeFlags {
	f := &JudgeFlags{fs: fs}
	fs.StringVar(&f.judge, "judge", "", "judge the rows of this file (scripts/bench-tunnel.sh writes it; first line: "+strings.ReplaceAll(RowsHeader, "\t", " ")+") and merge the verdicts into --out")
	fs.Var(&f.with, "with", "merge another goals file's verdicts into --out, as they are (a replication study's goals.json); repeatable")
	fs.StringVar(&f.out, "out", "", "the goals file (JSON) to merge the verdicts into and write, like docs/bench/tunnel-goals.json")
	fs.StringVar(&f.command, "command", "", "with --judge: the command that measured the rows, as the tables quote it")
	fs.StringVar(&f.date, "date", "", "with --judge: when the rows were measured, like \"2026-12-01 22:47 to 23:01 UTC\"")
	fs.StringVar(&f.table, "table", "", "print this goals file's tables (markdown: one row per goal, then one per case)")
	fs.StringVar(&f.summary, "summary", "", "print this goals file's table of one row per goal (markdown)")
	return f
}

// Given reports whether any judging flag was given.
func (f *JudgeFlags) Given() bool {
	return f.judge != "" || len(f.with) > 0 || f.out != "" || f.command != "" || f.date != "" || f.table != "" || f.summary != ""
}

// Validate refuses combinations that do nothing or mix printing with judging.
func (f *JudgeFlags) Validate() error {
	show := f.table != "" || f.summary != ""
	switch {
	case f.table != "" && f.summary != "":
		return errors.New("tunnel goals: --table and --summary each print a file: give one")
	case show && (f.judge != "" || len(f.with) > 0 || f.out != "" || f.command != "" || f.date != ""):
		return errors.New("tunnel goals: --table and --summary print a goals file; --judge, --with, --out, --command and --date write one: give one kind")
	case show:
		return nil
	case f.out == "":
		return errors.New("tunnel goals: --judge and --with need --out FILE, the goals file to write (like docs/bench/tunnel-goals.json)")
	case f.judge == "" && len(f.with) == 0:
		return errors.New("tunnel goals: --out needs --judge ROWS or --with FILE: nothing to judge")
	case f.judge == "" && (f.command != "" || f.date != ""):
		return errors.New("tunnel goals: --command and --date describe --judge's rows: give --judge")
	case f.judge != "" && (f.command == "" || f.date == ""):
		return errors.New(`tunnel goals: --judge needs --command (the command that measured the rows) and --date (like "2026-12-01 22:47 to 23:01 UTC"), which the tables quote`)
	}
	return nil
}

// Run prints a goals file's tables (--table, --summary), or judges the rows and merges
// the files given into --out, writes it and prints its tables.
func (f *JudgeFlags) Run(w io.Writer) error {
	if f.table != "" || f.summary != "" {
		gf, err := ReadGoals(f.table + f.summary)
		if err != nil {
			return err
		}
		if f.table != "" {
			_, err = io.WriteString(w, gf.Tables())
		} else {
			_, err = io.WriteString(w, gf.Summary())
		}
		return err
	}
	gf, err := readGoalsOrNone(f.out)
	if err != nil {
		return err
	}
	for _, p := range f.with {
		other, err := ReadGoals(p)
		if err != nil {
			return err
		}
		gf = gf.Merge(other.Goals...)
	}
	if f.judge != "" {
		rows, err := ReadRows(f.judge)
		if err != nil {
			return err
		}
		js, err := JudgeRows(rows)
		if err != nil {
			return fmt.Errorf("judge %s: %w", f.judge, err)
		}
		for i := range js {
			js[i].Command, js[i].Date = f.command, f.date
		}
		gf = gf.Merge(js...)
	}
	if err := WriteGoals(f.out, gf); err != nil {
		return err
	}
	_, err = io.WriteString(w, gf.Tables())
	return err
}

// ReadRows reads a --judge file.
func ReadRows(path string) ([]Row, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read rows: %w", err)
	}
	defer fh.Close()
	rows, err := parseRows(fh)
	if err != nil {
		return nil, fmt.Errorf("read rows %s: %w", path, err)
	}
	return rows, nil
}

// parseRows reads RowsHeader and the rows after it.
func parseRows(r io.Reader) ([]Row, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	if !sc.Scan() || sc.Text() != RowsHeader {
		return nil, fmt.Errorf("line 1: want the header %q", RowsHeader)
	}
	var rows []Row
	for n := 2; sc.Scan(); n++ {
		if sc.Text() == "" {
			continue
		}
		row, err := parseRow(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		rows = append(rows, row)
	}
	return rows, sc.Err()
}

func parseRow(line string) (Row, error) {
	f := strings.Split(line, "\t")
	if len(f) != 7 {
		return Row{}, fmt.Errorf("%d fields, want 7 (%s)", len(f), strings.ReplaceAll(RowsHeader, "\t", ", "))
	}
	r := Row{Goal: f[0], Case: f[1], Side: Side(f[2]), Name: f[3]}
	var err error
	if r.Round, err = strconv.Atoi(f[4]); err != nil || r.Round < 1 {
		return r, fmt.Errorf("round %q: want a whole number from 1", f[4])
	}
	if r.TPS, err = strconv.ParseFloat(f[5], 64); err != nil || r.TPS < 0 || !finite(r.TPS) {
		return r, fmt.Errorf("tps %q: want a number, 0 for a failed row", f[5])
	}
	if f[6] == "-" || f[6] == "" {
		return r, nil
	}
	for _, s := range strings.Split(f[6], ",") {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 || !finite(v) {
			return r, fmt.Errorf("seconds: %q: want per-second TPS, comma-separated, or -", s)
		}
		r.Seconds = append(r.Seconds, v)
	}
	return r, nil
}
