package model

import "github.com/wirelab/wirelab/internal/link"

// A token-bucket shaper (the lab's HTB: rate r, burst b) is neither a queue every byte
// waits in nor a bare cap on throughput. Tokens accrue at r up to b; a message goes out at
// line speed as far as the tokens reach and waits for the rest at r. Its backlog is that of
// a plain rate-r queue fed the same traffic, less b (network calculus: the greedy shaper of
// curve b + r·t), so a message that finds the bucket full waits (w − b)⁺/r, one that finds
// it partly refilled waits for the difference, and a sender that keeps it busy gets r.
//
// One thread sends a transaction's W bytes in a direction as k messages, one per round
// trip, and between two of them is elsewhere (CPU, round trips, the other direction) for a
// time g during which the bucket refills by min(b, r·g). Over a transaction it then waits
// Σ (w − min(b, r·g))⁺/r; with the bytes split evenly that is (W − min(k·b, r·A))⁺/r,
// where A = k·g is all the time away. Its cycle is A plus that wait, which is
//
//	max(W/r, A + (W − k·b)⁺/r)
//
// (when r·A ≤ k·b the credit covers exactly the time away, and the link runs at 100% with
// one thread; otherwise each message gets b and waits for the rest). So, read as a network:
// the shaper is a queueing station for the part no credit covers, (W − k·b)⁺/r, and a bound
// X ≤ r/W, since tokens arrive at r whoever spends them. With one thread this is the cycle
// above exactly. With many, threads meet at an empty bucket and wait for each other's W/r:
// at utilisation 1 the bound is what a queue of demand W/r gives too (X = r/W, latency by
// Little's law), and with the lab's fixed round trips a simulation of the bucket stays
// within a few per cent of the bound below it.
//
// The even split is the approximation: a transaction whose bytes come in a few large
// replies (oltp_read_only's range queries) covers less than k·b when a reply is larger than
// b, which only matters when the time away is long next to W/r (a low rate with a delay).
// A physical link is the bucket with b = 0: the queue of demand W/r.

// Credit is the seconds of a transmission demand (bytes × 8 / rate) that a token bucket of
// burstBytes lets out at line speed, refilled between the transaction's messages in that
// direction: min(bytes, messages × burst) × 8 / rate. 0 for a physical link (no burst).
func shaperCredit(bytes, messages, burstBytes float64, rateBps int64) float64 {
	if rateBps <= 0 || burstBytes <= 0 {
		return 0
	}
	return min(bytes, max(1, messages)*burstBytes) * 8 / float64(rateBps)
}

// Burst is the token bucket's depth in bytes: the lab's HTB burst for a shaped link
// (link.HTBBurst, the one place it is sized), 0 for a physical link.
func (l Link) Burst() float64 {
	if !l.Shaped || l.RateBps <= 0 {
		return 0
	}
	return float64(link.HTBBurst(l.RateBps))
}
