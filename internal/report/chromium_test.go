package report

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/nstest"
)

const chromium = "/usr/bin/chromium"

// probe runs after load inside the page and writes what the browser actually drew into
// the DOM, so --dump-dom can report it.
const probe = `<script>
window.addEventListener("load", function () {
  var imgs = document.images, ok = 0;
  for (var i = 0; i < imgs.length; i++) { if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++; }
  var m = document.createElement("pre"); m.id = "wirelab-probe";
  m.textContent = "tables=" + document.querySelectorAll("table").length + " imgs=" + imgs.length + " loaded=" + ok;
  // The raw link read-back: inside a <details> that is closed and draws no text until opened,
  // and in no table cell.
  var ds = document.querySelectorAll("details"), open = 0, hidden = 0, inTable = 0;
  var tds = document.querySelectorAll("td");
  for (var i = 0; i < ds.length; i++) {
    if (ds[i].open) open++;
    var pre = ds[i].querySelector("pre");
    if (pre && (pre.checkVisibility ? !pre.checkVisibility() : pre.offsetHeight === 0)) hidden++;
    var first = pre ? pre.textContent.split("\n")[0] : "";
    for (var j = 0; first && j < tds.length; j++) { if (tds[j].textContent.indexOf(first) >= 0) inTable++; }
  }
  m.textContent += " details=" + ds.length + " open=" + open + " hidden=" + hidden + " intable=" + inTable;
  document.body.appendChild(m);
});
</script>
`

var probeOut = regexp.MustCompile(`tables=(\d+) imgs=(\d+) loaded=(\d+) details=(\d+) open=(\d+) hidden=(\d+) intable=(\d+)`)

func chromiumArgs(profile string, extra ...string) []string {
	return append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir=" + profile, "--virtual-time-budget=5000"}, extra...)
}

// TestHTMLRendersInChromium opens each report.html in headless Chromium and checks that
// every table is in the DOM, every chart decoded (naturalWidth > 0) and the raw link
// read-back sits in a closed <details> that draws nothing, then takes screenshots of the
// page and of its top (the environment) and checks the page is not blank. Set
// WIRELAB_SCREENSHOTS=DIR to keep them.
func TestHTMLRendersInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	if _, err := os.Stat(chromium); err != nil {
		nstest.Unavailable(t, "chromium not installed (%v)", err)
	}
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			run := f.run()
			dir := renderFixture(t, run)
			blocks, err := Build(run)
			if err != nil {
				t.Fatal(err)
			}
			wantTables, wantImgs, wantDetails := 0, 0, 0
			for _, b := range blocks {
				switch b.(type) {
				case Table:
					wantTables++
				case *Chart:
					wantImgs++
				case Details:
					wantDetails++
				}
			}
			if run.Environment.LinkAsReadBack != "" && wantDetails == 0 {
				t.Fatal("the link read-back has no Details block")
			}
			html := readFile(t, filepath.Join(dir, "report.html"))
			page := filepath.Join(dir, "probe.html")
			if err := os.WriteFile(page, []byte(strings.Replace(html, "</body>", probe+"</body>", 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			dom := runChromium(t, chromiumArgs(t.TempDir(), "--dump-dom", "file://"+page)...)
			m := probeOut.FindStringSubmatch(dom)
			if m == nil {
				t.Fatalf("probe did not run; DOM starts %.300q", dom)
			}
			if got := fmt.Sprintf("%s/%s/%s", m[1], m[2], m[3]); got != fmt.Sprintf("%d/%d/%d", wantTables, wantImgs, wantImgs) {
				t.Errorf("tables/images/loaded = %s, want %d/%d/%d", got, wantTables, wantImgs, wantImgs)
			}
			if got := fmt.Sprintf("%s/%s/%s/%s", m[4], m[5], m[6], m[7]); got != fmt.Sprintf("%d/0/%d/0", wantDetails, wantDetails) {
				t.Errorf("details/open/hidden/in-table = %s, want %d/0/%d/0: the raw read-back must be collapsed and out of the tables", got, wantDetails, wantDetails)
			}

			// The top of the page: header and the environment table with its collapsed read-back.
			envShot := filepath.Join(dir, "env.png")
			runChromium(t, chromiumArgs(t.TempDir(), "--window-size=1200,900", "--screenshot="+envShot, "file://"+filepath.Join(dir, "report.html"))...)
			eb, err := os.ReadFile(envShot)
			if err != nil {
				t.Fatalf("no environment screenshot: %v", err)
			}
			if _, err := png.Decode(bytes.NewReader(eb)); err != nil {
				t.Fatalf("environment screenshot: %v", err)
			}

			shot := filepath.Join(dir, "shot.png")
			runChromium(t, chromiumArgs(t.TempDir(), "--window-size=1200,2400", "--screenshot="+shot, "file://"+filepath.Join(dir, "report.html"))...)
			b, err := os.ReadFile(shot)
			if err != nil {
				t.Fatalf("no screenshot: %v", err)
			}
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("screenshot: %v", err)
			}
			colours := map[uint32]bool{}
			for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += 7 {
				for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 7 {
					r, g, bl, _ := img.At(x, y).RGBA()
					colours[(r>>8)<<16|(g>>8)<<8|bl>>8] = true
				}
			}
			if len(colours) < 20 {
				t.Errorf("screenshot looks blank: %d colours", len(colours))
			}
			if keep := os.Getenv("WIRELAB_SCREENSHOTS"); keep != "" {
				_ = os.WriteFile(filepath.Join(keep, f.name+".png"), b, 0o644)
				_ = os.WriteFile(filepath.Join(keep, f.name+"-env.png"), eb, 0o644)
			}
		})
	}
}

func runChromium(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errb.String())
	}
	return out.String()
}
