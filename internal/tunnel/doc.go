// Package tunnel is wirelab's WAN channel: an entry end near the client and an exit end near
// the server relay each TCP connection over its own (optionally mutual-TLS) WAN connection,
// cutting the byte stream into groups sent as checksummed frames. Frames are raw or zstd;
// the zstd window persists across groups so repeated rows compress against earlier ones,
// and in auto mode the sender compresses only while the WAN is the bottleneck: a write
// waits, or TCP_INFO of the WAN socket shows a queue building (auto.go, queue.go).
package tunnel
