SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
GO ?= go
BIN := bin/wirelab

.DEFAULT_GOAL := help

help: ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*?## "}{printf "  %-14s %s\n", $$1, $$2}'

deps: ## install missing Debian packages (mariadb, postgresql-15 + pgbench, sysbench, iperf3, socat, ...) and Go modules
	@bash scripts/deps.sh

build: ## build bin/wirelab
	$(GO) build -o $(BIN) ./cmd/wirelab

run: deps build ## deps + build + a quick real measurement (20 mbit, 1/8/32 threads, plain vs compression) with a report
	$(BIN) study bandwidth --slow 20mbit --fast unlimited --threads 1,8,32 --duration 5s --warmup 1s --experiments n2 --out results/quick

test: deps ## vet + gofmt check + unit tests + root integration tests (real kernel, MariaDB, PostgreSQL, sysbench, pgbench)
	$(GO) vet ./...
	@bad=$$(gofmt -l cmd internal); if [ -n "$$bad" ]; then echo "gofmt needed: $$bad"; exit 1; fi
	@# -p 1: the root tests measure bandwidth and delay through the real kernel; packages
	@# running side by side on 2 cores would measure each other.
	$(GO) test -count=1 -p 1 -timeout 40m ./...

fuzz: ## every Go fuzz target in turn, 10 minutes in all (FUZZTIME=30s: that long each); stops at a failing input and says where it was written
	FUZZTIME=$(FUZZTIME) FUZZPARALLEL=$(FUZZPARALLEL) bash scripts/fuzz.sh

bench: build ## all benchmarks: go micro-benchmarks, tunnel and link fidelity tables
	$(GO) test -run '^$$' -bench . -benchmem ./internal/...
	$(MAKE) bench-tunnel bench-link

bench-tunnel: build ## tunnel throughput, compression ratio and lab TPS tables: docs/bench/tunnel.md
	bash scripts/bench-tunnel.sh

bench-tunnel-faults: build ## the tunnel's faults under replication at 20 ms (WAN dropped 30 s, exit or entry killed and restarted, certificate reload): checksums equal, lag back under 1 s
	WIRELAB_TUNNEL_FAULTS=1 $(GO) test -count=1 -run '^TestTunnelFault' -v -timeout 30m ./test/e2e/

bench-ssh: build ## over SSH (sshd hosts in namespaces) against the lab, alternating: the quick bandwidth study per point, replication's tunnel ÷ native wire bytes, and two client hosts against one: docs/bench/ssh.md
	bash scripts/bench-ssh.sh

bench-link: build ## link fidelity: asked vs measured rate and RTT: docs/bench/link.md
	bash scripts/bench-link.sh

bench-delay: build ## the delay line's cost (machine CPU per transaction, --rtt 0 vs 2ms) and fidelity (ping, one thread's round trip): docs/bench/delay.md
	bash scripts/bench-delay.sh

bench-model: build ## model accuracy: predict unseen links from 20mbit + unlimited profiles, measure them (docs/bench/model.md; QUICK=1 for short points)
	bash scripts/bench-model.sh

clean: ## remove build output (results/ are kept)
	rm -rf bin

.PHONY: help deps build run test fuzz bench bench-tunnel bench-tunnel-faults bench-ssh bench-link bench-delay bench-model clean
