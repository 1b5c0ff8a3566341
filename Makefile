# rdmactl — see README.md. `make lab` shows a Soft-RoCE session in the lab VM,
# `make test` runs the unit tests and the lab VM end-to-end tests.
GO       ?= go
# The version is the git tag (v0.1.0, or v0.1.0-3-gabc1234 after it); with no
# tag and no git the binary falls back to Go's embedded build info.
VERSION  ?= $(shell git describe --tags --dirty 2>/dev/null)
LDFLAGS  := -s -w $(if $(VERSION),-X main.version=$(VERSION))
# A release build: no local paths, no symbol tables (7 MB instead of 10).
GOFLAGS_BUILD := -trimpath -ldflags "$(LDFLAGS)"
BIN      ?= bin/rdmactl

# make install DESTDIR=/tmp/x PREFIX=/usr lays out a package's tree.
PREFIX   ?= /usr/local
DESTDIR  ?=
BINDIR   := $(PREFIX)/bin
MANDIR   := $(PREFIX)/share/man/man1
BASHDIR  := $(PREFIX)/share/bash-completion/completions
ZSHDIR   := $(PREFIX)/share/zsh/site-functions
FISHDIR  := $(PREFIX)/share/fish/vendor_completions.d
UNITDIR  := $(PREFIX)/lib/systemd/system

.PHONY: all deps build-deps build install install-files deb test unit e2e lab bench fuzz man vet clean

all: build

# Debian packages for building and for the lab (installs only what is missing).
deps:
	scripts/install-deps.sh

# Only what compiling needs (gcc, the verbs and CM headers).
build-deps:
	scripts/install-deps.sh --build

build: build-deps
	$(GO) build $(GOFLAGS_BUILD) -o $(BIN) ./cmd/rdmactl

install: build install-files

# Installs an already built $(BIN): the .deb recipe and the lab test use it
# without a Go toolchain run.
install-files:
	install -D -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/rdmactl
	install -d $(DESTDIR)$(MANDIR) $(DESTDIR)$(BASHDIR) $(DESTDIR)$(ZSHDIR) $(DESTDIR)$(FISHDIR) $(DESTDIR)$(UNITDIR)
	install -m 0644 man/*.1 $(DESTDIR)$(MANDIR)/
	$(BIN) completion bash >$(DESTDIR)$(BASHDIR)/rdmactl
	$(BIN) completion zsh >$(DESTDIR)$(ZSHDIR)/_rdmactl
	$(BIN) completion fish >$(DESTDIR)$(FISHDIR)/rdmactl.fish
	sed 's|@BINDIR@|$(BINDIR)|g' packaging/rdmactl-rxe.service >$(DESTDIR)$(UNITDIR)/rdmactl-rxe.service
	chmod 0644 $(DESTDIR)$(BASHDIR)/rdmactl $(DESTDIR)$(ZSHDIR)/_rdmactl $(DESTDIR)$(FISHDIR)/rdmactl.fish $(DESTDIR)$(UNITDIR)/rdmactl-rxe.service

# A Debian package in dist/, built by dpkg-deb from packaging/deb/control.
deb: build
	packaging/mkdeb.sh $(BIN) "$(VERSION)" dist

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
# gen-man is a development tool (cmd/gen-man), not part of the shipped binary.
man:
	rm -rf man && mkdir -p man
	SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct) $(GO) run ./cmd/gen-man man

clean:
	rm -rf bin dist .lab
