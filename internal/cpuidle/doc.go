// Package cpuidle keeps the CPUs out of deep idle states while wirelab measures.
//
// A query that crosses from sysbench to mysqld wakes a sleeping CPU; on a VM (cpuidle
// driver haltpoll) or a server with deep C-states that wake-up costs tens to hundreds of
// microseconds, which at one or two client threads outweighs the wire being studied. The
// kernel's PM QoS interface (/dev/cpu_dma_latency) takes a latency bound in microseconds
// and honours it for as long as the file stays open; wirelab writes 0 and holds the file
// for the length of a run. The kernel drops the request when the file is closed, by
// Release or by the process dying (even of kill -9), so nothing outlives wirelab and
// `wirelab down` has nothing to undo.
package cpuidle
