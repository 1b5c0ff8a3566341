# rdmactl — see README.md. `make lab` shows a Soft-RoCE session in the lab VM,
# `make test` runs the unit tests and the lab VM end-to-end tests.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
BIN      := bin/rdmactl

.PHONY: all deps build test unit e2e lab bench fuzz man vet clean

all: build

# Debian packages for building and for the lab (installs only what is missing).
deps:
	scripts/install-deps.sh

build: deps
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/rdmactl

vet:
	$(GO) vet ./...
	$(GO) vet -tags e2e ./e2e

unit: deps vet
	$(GO) test -count=1 ./...

# Boots the lab VM (fails, never skips, when it cannot) and compares rdmactl
# with the real tools inside it.
e2e: deps
	$(GO) test -v -count=1 -timeout 60m -tags e2e ./e2e

test: unit e2e

# Short fuzz runs of every wire decoder.
FUZZTIME ?= 20s
fuzz:
	@for t in $$(grep -rl --include='*_test.go' '^func Fuzz' pkg); do \
		d=$$(dirname $$t); \
		for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$t | cut -c6-); do \
			echo "fuzz $$d $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) ./$$d || exit 1; \
		done; \
	done

# rdmactl against rping and the demo against itself, in one lab boot.
bench: build
	scripts/lab.sh run -- 'scripts/bench.sh $(BIN)'

lab: build
	scripts/lab.sh run -- 'scripts/smoke.sh $(BIN)'

# Dated by the last commit, so regenerating unchanged commands changes nothing.
man: build
	rm -rf man && mkdir -p man
	SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct) $(BIN) gen-man man

clean:
	rm -rf bin .lab
