package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/result"
)

// clientsBlocks say how a study's points were loaded from several client hosts: the
// split of each point's threads, how the figures above merge the clients', and, for the
// points whose clients disagree (result.ClientsDisagree), a row per client. Nothing for
// points loaded from one host.
func clientsBlocks(pts []result.Point) []Block {
	var split []result.Point
	for _, p := range pts {
		if len(p.Clients) > 1 {
			split = append(split, p)
		}
	}
	if len(split) == 0 {
		return nil
	}
	bs := []Block{Heading{3, "Client hosts"}, Paragraph{splitText(split)}}
	t := Table{Caption: "Points whose clients disagree", Header: []string{"series", "threads", "client", "its threads",
		"TPS", "TPS per thread", "p95 ms", "wire MB/s up", "wire MB/s down", "client CPU (cores)"}}
	t.Numeric = numericCols(len(t.Header))
	t.Numeric[0], t.Numeric[2] = false, false
	for _, p := range split {
		if !result.ClientsDisagree(p.Clients) {
			continue
		}
		for _, c := range p.Clients {
			t.Rows = append(t.Rows, []string{p.Series, strconv.Itoa(p.Threads), c.Host, strconv.Itoa(c.Threads), num(c.TPS),
				num(c.TPS / float64(max(c.Threads, 1))), num(c.LatP95Ms), mbps(c.WireBytesPerSUp), mbps(c.WireBytesPerSDown), num(c.CPUClient)})
		}
	}
	if len(t.Rows) == 0 {
		return append(bs, Paragraph{"The clients agreed at every point: no client's TPS per thread lay outside another's " +
			"95% interval (batch means of its measured seconds; the range of its seconds where a point is too short for one), " +
			"so the merged figures stand for each of them; results.json keeps every client's own (points[].clients)."})
	}
	return append(bs, Paragraph{"At these points a client's TPS per thread lay outside another's 95% interval (batch means of " +
		"its measured seconds; the range of its seconds where a point is too short for one): the clients did not see the same " +
		"server or link, and the merged figures above hide that difference."}, t)
}

// splitText names the client hosts and each thread count's split, and how the figures
// above are the clients' merged.
func splitText(pts []result.Point) string {
	var hostNames []string
	for _, c := range pts[0].Clients {
		hostNames = append(hostNames, c.Host)
	}
	seen := map[int]bool{}
	var splits []string
	for _, p := range pts {
		if seen[p.Threads] {
			continue
		}
		seen[p.Threads] = true
		var parts []string
		for _, c := range p.Clients {
			parts = append(parts, strconv.Itoa(c.Threads))
		}
		splits = append(splits, fmt.Sprintf("%d as %s", p.Threads, strings.Join(parts, "+")))
	}
	return fmt.Sprintf("Each point's load ran from %d client hosts at once (%s), its threads split among them, the "+
		"remainder to the first: %s. The figures above are theirs merged: TPS, QPS and errors summed second by second, "+
		"the latency percentiles read from their histograms merged (not averaged), wire bytes and client CPU summed, and "+
		"the link's utilisation over %d links of the rate, one per client.",
		len(hostNames), strings.Join(hostNames, ", "), strings.Join(splits, ", "), len(hostNames))
}
