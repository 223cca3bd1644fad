package report

import (
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

func envRows(e result.Environment) map[string]string {
	rows := map[string]string{}
	for _, r := range envTable(&result.Run{Environment: e}).Rows {
		rows[r[0]] = r[1]
	}
	return rows
}

// The environment table says what the link did in words and numbers; the raw read-back is
// never a table cell but a collapsed block of its own.
func TestEnvLinkInWords(t *testing.T) {
	lab := map[string]string{"client": "to-client", "server": "to-server"}
	raw := "to-server: qdisc htb 1: root refcnt 2\nto-server: class htb 1:1 rate 20Mbit"
	e := result.Environment{Shaper: "htb+nfqueue", LinkAsApplied: "rate 20mbit, delay 5ms", LinkAsReadBack: raw,
		Link: link.Directions(link.Condition{RateBps: 20e6, Delay: 5 * time.Millisecond, Jitter: time.Millisecond, LossPct: 0.1}, "htb+nfqueue", lab)}
	rows := envRows(e)
	want := "20 Mbit/s each way, HTB, burst 25 kB, queue 133 packets; delay 5 ms one way ± 1 ms, loss 0.1% by the NFQUEUE delayer (queue 1024 packets)"
	if rows["link"] != want {
		t.Errorf("link row %q\nwant       %q", rows["link"], want)
	}
	for k, v := range rows {
		if strings.Contains(v, "qdisc") || k == "link read back" || k == "shaper" {
			t.Errorf("row %q = %q: raw or redundant in the table", k, v)
		}
	}
	if d, ok := readBackBlock(e).(Details); !ok || d.Text != raw {
		t.Errorf("read-back block %#v", readBackBlock(e))
	}

	// Directions that differ are named; settings applied in turn are numbered.
	e.Link = append(link.Directions(link.Condition{RateBps: 2e6}, "htb", map[string]string{"server": "to-server"}),
		link.Directions(link.Condition{RateBps: 50e6}, "htb", map[string]string{"client": "to-client"})...)
	rows = envRows(e)
	if !strings.HasPrefix(rows["link 1"], "2 Mbit/s toward server, HTB") || !strings.HasPrefix(rows["link 2"], "50 Mbit/s toward client") {
		t.Errorf("asymmetric link rows %q / %q", rows["link 1"], rows["link 2"])
	}
}

// results.json files written before Environment.Link still render: the condition as asked.
func TestEnvLinkFallsBackOnOldFiles(t *testing.T) {
	e := result.Environment{Shaper: "htb", LinkAsApplied: "rate 20mbit", LinkAsReadBack: "htb rate 20Mbit"}
	rows := envRows(e)
	if rows["link asked"] != "rate 20mbit" || rows["shaper"] != "htb" {
		t.Errorf("fallback rows %v", rows)
	}
	if _, ok := rows["link read back"]; ok {
		t.Error("raw read-back still in the table")
	}
	if readBackBlock(result.Environment{}) != nil {
		t.Error("a block for an empty read-back")
	}
}

func TestRateAndBytesWords(t *testing.T) {
	for bps, want := range map[int64]string{20e6: "20 Mbit/s", 2.5e6: "2.5 Mbit/s", 1e9: "1 Gbit/s", 10e9: "10 Gbit/s", 64e3: "64 kbit/s", 500: "500 bit/s"} {
		if got := rateWords(bps); got != want {
			t.Errorf("rateWords(%d) = %q, want %q", bps, got, want)
		}
	}
	for n, want := range map[int]string{25000: "25 kB", 1250000: "1.25 MB", 3028: "3.03 kB", 900: "900 B"} {
		if got := bytesWords(n); got != want {
			t.Errorf("bytesWords(%d) = %q, want %q", n, got, want)
		}
	}
}

// A Details block is a fenced block in markdown whose fence the text cannot close, and a
// closed <details> in HTML.
func TestDetailsRendering(t *testing.T) {
	d := Details{Summary: "raw", Text: "a ``` b\n<x>"}
	md := Markdown([]Block{d})
	if !strings.Contains(md, "````text\na ``` b\n<x>\n````") {
		t.Errorf("markdown:\n%s", md)
	}
	html := HTML("t", []Block{d}, nil)
	if !strings.Contains(html, "<details><summary>raw</summary>\n<pre>a ``` b\n&lt;x&gt;</pre>\n</details>") {
		t.Errorf("html:\n%s", html)
	}
}
