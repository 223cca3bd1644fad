package report

import (
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/result"
)

// Where the link is the limit, the fitted limit stands beside what the link carries, and
// a gap over 20% is said.
func TestMaxLoadFitLink(t *testing.T) {
	probe := func(q float64, ok bool) result.Point {
		p := result.Point{Series: result.MaxLoadSeries, Channel: "native", QPS: q, LinkRateBps: 2_000_000,
			Replication: &result.ReplicationStats{TargetQPS: q, Bounded: ok, ChecksumOK: true, LoadS: 20,
				WireDownBytesTotal: int64(560 * q * 20)}} // 560 B a query: the link carries 446 QPS
		if !ok {
			p.Bottleneck = "network"
		}
		return p
	}
	pts := []result.Point{probe(540, true), probe(648, false), probe(594, true), probe(618, false), probe(606, true)}
	md := Markdown(maxLoadFit(pts))
	if !strings.Contains(md, "| native | 6") || !strings.Contains(md, "| 446.4 | 1.3") || !strings.Contains(md, "(apart by more than 20%)") {
		t.Errorf("fit table:\n%s", md)
	}
	if maxLoadFit(pts[:1]) != nil {
		t.Error("a search without a failure has no fitted limit to show")
	}
}
