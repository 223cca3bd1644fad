// Package tunnel is wirelab's WAN channel: an entry end near the client and an exit end near
// the server relay TCP connections over (optionally mutual-TLS) WAN connections, cutting the
// byte stream into groups sent as checksummed frames: each client connection over its own
// WAN connection, or as streams of a few mux links (mux.go; up to one per CPU, a client
// each until all are open, mux_ends.go), each sharing one zstd history per direction. Frames are raw or zstd; the zstd window persists across groups so
// repeated rows compress against earlier ones, and in auto mode the sender compresses only
// while the WAN is the bottleneck: a write waits, or TCP_INFO of the WAN socket shows a
// queue building (auto.go, queue.go); on a mux link the level follows the link (level.go),
// and with a group wait a frame waits for more of a one-way stream (mux_sched.go).
// On Linux a mux link's bytes move on one locked thread per link end with its own epoll set
// (relayloop_linux.go), so relaying a small message costs no goroutine wake-up. Under TLS a
// mux link leaves crypto/tls once the handshake is done and seals its bytes in records of
// its own, keyed from the session's exporter (records.go).
package tunnel
