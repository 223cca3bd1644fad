package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/result"
)

// SyncFindings are the sync study's findings in a DBA's words: what each commit pays per
// mode (result.CommitFits), what each mode sustains at the most threads measured against
// the control, where each falls below target TPS (0 = no target) and which points fell
// back to asynchronous. The report's section and the study's closing lines both print
// these.
func SyncFindings(pts []result.Point, targetTPS float64) []string {
	var out []string
	for _, f := range result.CommitFits(pts) {
		out = append(out, fmt.Sprintf("%s: each commit pays %s RTT + %s ms (median commit at %s, fitted over %d RTTs%s)",
			f.Mode, fmtRTTs(f.RTTs), num(f.ConstMs), threadsN(f.Threads), f.Points, r2Text(f)))
	}
	out = append(out, commitOrder(pts)...)
	out = append(out, sustained(pts)...)
	if targetTPS > 0 {
		out = append(out, belowTarget(pts, targetTPS)...)
	}
	for _, mode := range result.SyncModes(pts) {
		if n := fellBack(pts, mode); n > 0 {
			out = append(out, fmt.Sprintf("%s fell back to asynchronous at %d point(s): their figures are not the mode's and are left out of the findings", mode, n))
		}
	}
	return out
}

// rttText is a round trip in ms as the user gave it: 0, 7, 0.5, 100.
func rttText(ms float64) string { return strconv.FormatFloat(ms, 'f', -1, 64) }

func fmtRTTs(v float64) string { return fmt.Sprintf("%.2f", v) }

func r2Text(f result.CommitFit) string {
	if f.Points < 3 {
		return ""
	}
	return fmt.Sprintf(", R² %.3f", f.R2)
}

// syncGrid are the RTTs and thread counts measured, ascending.
func syncGrid(pts []result.Point) (rtts []float64, threads []int) {
	for _, p := range pts {
		if p.Sync == nil {
			continue
		}
		if !slices.Contains(rtts, p.Sync.RTTMs) {
			rtts = append(rtts, p.Sync.RTTMs)
		}
		if !slices.Contains(threads, p.Threads) {
			threads = append(threads, p.Threads)
		}
	}
	slices.Sort(rtts)
	slices.Sort(threads)
	return rtts, threads
}

// control is the control mode of the points ("" when none was measured).
func control(pts []result.Point) string {
	for _, p := range pts {
		if p.Sync != nil && p.Sync.Control {
			return p.Series
		}
	}
	return ""
}

// commitOrder is every mode's median commit at the largest RTT and the fewest threads,
// in the order the modes ran: the line that shows the levels' order.
func commitOrder(pts []result.Point) []string {
	rtts, threads := syncGrid(pts)
	if len(rtts) == 0 {
		return nil
	}
	r, th := rtts[len(rtts)-1], threads[0]
	var parts []string
	for _, mode := range result.SyncModes(pts) {
		if v, ok := result.SyncMean(pts, mode, r, th, func(p result.Point) float64 { return p.Sync.CommitP50Ms }); ok {
			parts = append(parts, mode+" "+num(v)+" ms")
		}
	}
	if len(parts) < 2 {
		return nil
	}
	return []string{fmt.Sprintf("at %s ms RTT and %s, the median commit takes: %s", rttText(r), threadsN(th), strings.Join(parts, ", "))}
}

// sustained is, per mode other than the control, its TPS at the most threads at each RTT
// above 0 as a share of the control's.
func sustained(pts []result.Point) []string {
	ctl := control(pts)
	rtts, threads := syncGrid(pts)
	if ctl == "" || len(threads) == 0 {
		return nil
	}
	th := threads[len(threads)-1]
	var out []string
	for _, mode := range result.SyncModes(pts) {
		if mode == ctl {
			continue
		}
		var parts []string
		for _, r := range rtts {
			if r == 0 {
				continue
			}
			tps, ok := result.SyncTPS(pts, mode, r, th)
			base, okb := result.SyncTPS(pts, ctl, r, th)
			if !ok || !okb || base == 0 {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s TPS at %s ms — %s of %s", num(tps), rttText(r), pct(tps/base), ctl))
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("with %s %s sustains %s", threadsN(th), mode, strings.Join(parts, "; ")))
		}
	}
	return out
}

// belowTarget is, per mode at the most threads, the RTT at which it falls below target.
func belowTarget(pts []result.Point, target float64) []string {
	_, threads := syncGrid(pts)
	if len(threads) == 0 {
		return nil
	}
	var out []string
	for _, b := range result.BelowTarget(pts, threads[len(threads)-1], target) {
		if b.Found {
			out = append(out, fmt.Sprintf("with %s %s falls below %s TPS at %s ms RTT", threadsN(b.Threads), b.Mode, num(target), rttText(b.RTTMs)))
		} else {
			out = append(out, fmt.Sprintf("with %s %s stays at or above %s TPS at every RTT measured (up to %s ms)", threadsN(b.Threads), b.Mode, num(target), rttText(b.AtRTTMs)))
		}
	}
	return out
}

// fellBack counts mode's points that fell back to asynchronous.
func fellBack(pts []result.Point, mode string) int {
	n := 0
	for _, p := range pts {
		if p.Sync != nil && p.Series == mode && p.Sync.FellBack {
			n++
		}
	}
	return n
}
