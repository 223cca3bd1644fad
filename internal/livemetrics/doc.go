// Package livemetrics serves a measuring command's live figures to Prometheus while it
// runs (--metrics-listen of run, calibrate and the studies): each point's per-second TPS
// and latency, its transactions, wire bytes each way, CPU by side and the delay line's
// CPU, and the driver's latency histogram, labelled by study, series, channel, threads
// and link. It knows nothing of studies beyond those label values: the study engine
// publishes into a Registry through study.Publisher.
package livemetrics
