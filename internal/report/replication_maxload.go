package report

import (
	"fmt"

	"github.com/wirelab/wirelab/internal/result"
)

// maxLoadFit is each channel's limit fitted to every probe of its search, with its 95%
// interval, and where the link is the limit what the link can carry at the wire bytes a
// query took, flagged when the two lie more than result.LinkTolerance apart. nil when no
// channel's search found a failing load above a passing one.
func maxLoadFit(pts []result.Point) []Block {
	t := Table{Caption: "Max sustainable load fitted to every probe at the load it delivered (the load at which a probe passes half the time), and what the link can carry where the link is the limit",
		Header: []string{"channel", "max sustainable QPS", "95% interval", "probes", "link carries QPS", "fit ÷ link"}}
	t.Numeric = numericCols(len(t.Header))
	for _, e := range result.MaxLoads(pts) {
		if e.Est <= 0 {
			continue
		}
		link, vs := "– (not the limit)", "–"
		if e.LinkQPS > 0 {
			link, vs = num(e.LinkQPS), fmt.Sprintf("%.2f×", e.Est/e.LinkQPS)
			if e.LinkDisagrees {
				vs += fmt.Sprintf(" (apart by more than %.0f%%)", 100*result.LinkTolerance)
			}
		}
		t.Rows = append(t.Rows, []string{e.Channel, num(e.Est), num(e.Lo) + "–" + num(e.Hi), fmt.Sprint(e.Probes), link, vs})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return []Block{t}
}
