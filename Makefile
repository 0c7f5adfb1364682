# tracerd: build, test, install. `make help` lists the targets.
PREFIX ?= /usr/local
DESTDIR ?=
SYSCONFDIR ?= /etc
UNITDIR ?= /etc/systemd/system

CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
VERSION := 0.1.0

ifeq ($(SANITIZE),1)
# ASan+UBSan: tracerd's own code, so not the tests bound to the kernel or the
# environment (tests/run.sh, ONCE), which the plain `make test` runs, unless
# KERNEL_TESTS=yes or TESTS= names them.
BUILD ?= build-san
CC := clang
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
KERNEL_TESTS ?= no
export KERNEL_TESTS
else ifeq ($(SANITIZE),thread)
# ThreadSanitizer: the tests that run tracerd's threads (the sink queue's
# writer, the store's file thread, the recorder's snapshot thread, the
# detach workers), unless TESTS= says; not store_diff, a comparison of
# rendering that takes minutes.
BUILD ?= build-tsan
CC := clang
SAN := -fsanitize=thread -fno-omit-frame-pointer
TESTS ?= store$$ journal reload loss recorder
export TESTS
else ifeq ($(SANITIZE),fuzz)
# libFuzzer harnesses (tests/fuzz): the library instrumented for coverage.
BUILD ?= build-fuzz
CC := clang
SAN := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else
BUILD ?= build
SAN :=
endif

CFLAGS ?= -O2 -g
override CFLAGS += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -DTRACERD_VERSION='"$(VERSION)"' \
	-I. -Iinclude -Idaemon -I$(BUILD) $(SAN)
override LDFLAGS += $(SAN)
LIBS := -lbpf -lelf -lz -lzstd -lsystemd -ltraceevent -lpthread

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Wextra -Werror \
	-Iinclude -Ibpf -I/usr/include/$(shell uname -m)-linux-gnu

# Each stage's folder; see docs/ARCHITECTURE.md. Headers are included by
# their stage's path ("render/render.h", "kernel-events/events.h").
STAGE_DIRS := include kernel-events $(wildcard daemon/*/) daemon
LIB_SRCS := $(wildcard include/*.c kernel-events/*.c daemon/*/*.c) $(filter-out daemon/main.c,$(wildcard daemon/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
BPF_SRCS := $(wildcard bpf/*.bpf.c)
SKELS := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/%.skel.h)
TOOL_BPF_SRCS := $(wildcard tests/tools/*.bpf.c)
TOOL_SKELS := $(TOOL_BPF_SRCS:tests/tools/%.bpf.c=$(BUILD)/%.skel.h)
HDRS := $(wildcard include/*.h kernel-events/*.h daemon/*/*.h daemon/*.h)
TEST_SRCS := $(wildcard tests/unit/*.c) $(filter-out %.bpf.c,$(wildcard tests/tools/*.c))
TEST_BINS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)

.SECONDARY:
.PHONY: all deps run test check-layers install uninstall clean help fuzz fuzz-ci fuzzers bench \
	bench-render bench-deps bench-build bench-latency bench-metrics bench-recorder
all: $(BUILD)/tracerd $(TEST_BINS)

help:
	@echo "make deps      install the Debian packages needed to build and test"
	@echo "make           build tracerd and the test programs"
	@echo "make run       deps + build + run in the foreground on conf/tracerd.conf"
	@echo "make test      all tests (root: real BPF, tracefs, journald, systemd); TESTS=name... a few"
	@echo "make test SANITIZE=1   the same under ASan+UBSan, but the tests bound to the kernel"
	@echo "               or the environment (KERNEL_TESTS=yes: those too)"
	@echo "make test SANITIZE=thread   the tests of the threads (store, journal, reload, loss) under TSan"
	@echo "make check-layers   no stage includes a header of a later stage; no call circle between files"
	@echo "make fuzz      every libFuzzer harness for FUZZ_SECONDS (default 600) each"
	@echo "make fuzz-ci   every libFuzzer harness for 60 s each; fails on any crash"
	@echo "make install   install binary, units, config and man pages (PREFIX, DESTDIR)"
	@echo "make bench-render   records rendered per second, compiled vs libtraceevent"
	@echo "make bench     tracerd against ftrace, perf and bpftrace (root; results in bench/results/,"
	@echo "               the summary table in bench/README.md)"
	@echo "make bench-deps   install what make bench needs (bpftrace, perf)"
	@echo "make bench-latency   wakeup latency pairs, tracerd vs bpftrace (root; bench/results/DATE-latency.txt)"
	@echo "make bench-metrics   GET /metrics: 10k-series scrapes, 100 scrapers, per-event cost (root; bench/results/DATE-metrics.txt)"
	@echo "make bench-recorder  the flight recorder: per event against the store, no disk writes, a 256M snapshot, RSS (root)"

deps:
	scripts/deps.sh

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) include/tracerd_record.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.bpf.o: tests/tools/%.bpf.c
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(BUILD)/%.o: %.c $(HDRS) $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

# .syscall's names (daemon/aggregate/hist_syscall.c): [nr] = "name", from the UAPI header.
UNISTD_H := /usr/include/$(shell uname -m)-linux-gnu/asm/unistd_64.h
$(BUILD)/syscall_names.h: $(UNISTD_H)
	@mkdir -p $(@D)
	sed -n 's/^#define __NR_\([a-z0-9_]*\)[[:space:]]\{1,\}\([0-9]\{1,\}\)$$/[\2] = "\1",/p' $< > $@.tmp && mv $@.tmp $@

$(BUILD)/daemon/aggregate/hist_syscall.o: $(BUILD)/syscall_names.h

# --version names the libsystemd and libtraceevent it was built with: neither
# has a run-time version call.
$(BUILD)/daemon/inspect.o: override CFLAGS += \
	-DLIBSYSTEMD_VERSION='"$(shell pkg-config --modversion libsystemd)"' \
	-DLIBTRACEEVENT_VERSION='"$(shell pkg-config --modversion libtraceevent)"'

$(BUILD)/libtracerd.a: $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^	# no member of a removed source stays

$(BUILD)/tracerd: $(BUILD)/daemon/main.o $(BUILD)/libtracerd.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/%: tests/%.c $(BUILD)/libtracerd.a $(HDRS) tests/unit/test.h tests/unit/fixtures.h tests/unit/records.h $(TOOL_SKELS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< $(BUILD)/libtracerd.a $(LIBS)

# The render benchmark (bench/render-bench.c): records/s per core, compiled vs libtraceevent.
$(BUILD)/bench/render-bench: bench/render-bench.c $(BUILD)/libtracerd.a $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libtracerd.a $(LIBS)

bench-render: $(BUILD)/bench/render-bench
	$(BUILD)/bench/render-bench

FUZZ_SRCS := $(wildcard tests/fuzz/*.c)
FUZZERS := $(FUZZ_SRCS:tests/%.c=$(BUILD)/tests/%)

$(BUILD)/tests/fuzz/%: tests/fuzz/%.c tests/fuzz/render_input.h tests/unit/fixtures.h $(BUILD)/libtracerd.a $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fsanitize=fuzzer -Itests/unit $(LDFLAGS) -o $@ $< $(BUILD)/libtracerd.a $(LIBS)

fuzzers: $(FUZZERS)

FUZZ_SECONDS ?= 600
fuzz:
	$(MAKE) SANITIZE=fuzz fuzzers
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh

fuzz-ci:
	$(MAKE) SANITIZE=fuzz fuzzers
	FUZZ_CI=1 FUZZ_SECONDS=60 tests/fuzz/run.sh

run: deps all
	scripts/mount-tracefs.sh
	$(BUILD)/tracerd --config conf/tracerd.conf --foreground

test: all
	BUILD=$(BUILD) tests/run.sh

# No stage includes a header of a later one (scripts/check-layers.py has the
# order), and no files call each other in a circle or a later stage (nm on
# the objects, hence built first); tests/run.sh runs it too.
check-layers: $(LIB_OBJS) $(BUILD)/daemon/main.o
	BUILD=$(BUILD) scripts/check-layers.py

install: $(BUILD)/tracerd
	install -D -m 0755 $(BUILD)/tracerd $(DESTDIR)$(PREFIX)/bin/tracerd
	install -D -m 0644 units/tracerd.service $(DESTDIR)$(UNITDIR)/tracerd.service
	install -D -m 0644 units/tracerd-metrics.socket $(DESTDIR)$(UNITDIR)/tracerd-metrics.socket
	install -D -m 0644 conf/bash-completion/tracerd \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/tracerd
	sed -i 's|@BINDIR@|$(PREFIX)/bin|g; s|@SYSCONFDIR@|$(SYSCONFDIR)|g' $(DESTDIR)$(UNITDIR)/tracerd.service
	install -d $(DESTDIR)$(SYSCONFDIR)/tracerd/tracerd.conf.d
	test -e $(DESTDIR)$(SYSCONFDIR)/tracerd/tracerd.conf || \
		install -m 0644 conf/tracerd.conf $(DESTDIR)$(SYSCONFDIR)/tracerd/tracerd.conf

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/tracerd $(DESTDIR)$(UNITDIR)/tracerd.service \
		$(DESTDIR)$(UNITDIR)/tracerd-metrics.socket \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/tracerd

# The man pages: tracerd(8) as written, tracerd.conf(5) with an entry per key
# of the config table (docs/man/man-keys.c), so that it cannot drift.
MAN_PAGES := $(BUILD)/man/tracerd.8 $(BUILD)/man/tracerd.conf.5
.PHONY: man install-man uninstall-man
all: $(MAN_PAGES)
man: $(MAN_PAGES)

$(BUILD)/docs/man-keys: docs/man/man-keys.c $(BUILD)/libtracerd.a $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libtracerd.a $(LIBS)

$(BUILD)/man/tracerd.conf.5: docs/man/tracerd.conf.5.in $(BUILD)/docs/man-keys
	@mkdir -p $(@D)
	$(BUILD)/docs/man-keys $< > $@.tmp && mv $@.tmp $@

$(BUILD)/man/tracerd.8: docs/man/tracerd.8
	@mkdir -p $(@D)
	sed 's/@VERSION@/$(VERSION)/g' $< > $@

install: install-man
install-man: $(MAN_PAGES)
	install -D -m 0644 $(BUILD)/man/tracerd.8 $(DESTDIR)$(PREFIX)/share/man/man8/tracerd.8
	install -D -m 0644 $(BUILD)/man/tracerd.conf.5 $(DESTDIR)$(PREFIX)/share/man/man5/tracerd.conf.5

uninstall: uninstall-man
uninstall-man:
	rm -f $(DESTDIR)$(PREFIX)/share/man/man8/tracerd.8 $(DESTDIR)$(PREFIX)/share/man/man5/tracerd.conf.5

# The benchmark (bench/README.md): not part of `make test`. BENCH_ARGS is
# passed to bench/bench.py, e.g. BENCH_ARGS="--quick".
# `make` builds them too, so that a change that breaks one fails the build.
BENCH_BINS := $(BUILD)/bench/workload $(BUILD)/bench/drain $(BUILD)/bench/prog-per-event \
	$(BUILD)/bench/ring-drain $(BUILD)/bench/detach-cost $(BUILD)/bench/render-bench \
	$(BUILD)/bench/filter-loop $(BUILD)/bench/reject-floor-loader $(BUILD)/bench/reject-floor.bpf.o \
	$(BUILD)/bench/latw
all: $(BENCH_BINS)

$(BUILD)/bench/%: bench/%.c bench/chunks.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $<

$(BUILD)/bench/ring-drain: bench/ring-drain.c $(BUILD)/libtracerd.a $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libtracerd.a $(LIBS)

$(BUILD)/bench/reject-floor-loader: bench/reject-floor-loader.c bench/attach_disabled.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -lbpf -lelf -lz

$(BUILD)/bench/%.bpf.o: bench/%.bpf.c
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bench/prog-per-event: bench/prog-per-event.c $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -lbpf -lelf -lz

# What detaching costs, by way of detaching (docs/OPERATIONS.md, "Stop and reload").
$(BUILD)/bench/detach-cost: bench/detach-cost.c $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -lbpf -lelf -lz -lpthread

bench-deps:
	scripts/bench-deps.sh

bench-build: $(BUILD)/tracerd $(BENCH_BINS)

# Wakeup latency pairs, tracerd's hist triggers against bpftrace (bench/README.md).
bench-latency: bench-deps bench-build
	scripts/mount-tracefs.sh
	python3 bench/latency-bench.py --build $(BUILD) $(LATENCY_ARGS)

# GET /metrics under load (bench/README.md); METRICS_ARGS="--parts 1" for the scrape alone.
bench-metrics: bench-build
	scripts/mount-tracefs.sh
	python3 bench/metrics-bench.py --build $(BUILD) $(METRICS_ARGS)

bench-recorder: bench-build
	scripts/mount-tracefs.sh
	python3 bench/recorder-bench.py --tracerd $(BUILD)/tracerd $(RECORDER_ARGS)

bench: bench-deps bench-build
	scripts/mount-tracefs.sh
	@# bench.py runs render-bench, when the Makefile builds one, and keeps its figures
	@if grep -q '^bench-render:' Makefile; then $(MAKE) --no-print-directory $(BUILD)/bench/render-bench; fi
	@# --readme: the summary table goes into bench/README.md, between its markers
	python3 bench/bench.py --build $(BUILD) --readme $(BENCH_ARGS)

clean:
	rm -rf build build-san build-tsan build-fuzz

# The user-stack workload walks its own frame pointers, and the kernel's
# walk of its stack must find each function's frame: no optimization, frame
# pointers kept (tests/tools/ustack_prog.c).
$(BUILD)/tests/tools/ustack_prog: override CFLAGS += -O0 -fno-omit-frame-pointer
