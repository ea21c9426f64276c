# execgate build. Sources are picked up by directory, so adding a file needs no
# Makefile edit:
#   bpf/*.bpf.c      -> build/bpf/*.bpf.o + build/include/*.skel.h
#   bpf/bench/       benchmark-only programs (scripts/make/speed.mk)
#   user/core/*.c    pure logic (codec, comparator, caches), no kernel I/O
#   user/frontend/*.c front-end plumbing (option parser), linked into the
#                    programs only, never into libexecgate
#   user/client/*.c  a front end's side (route cache, replay set, retry
#                    policy): libexecgate-client.a, never in the worker
#   user/fleet/*.c   the etcd client (libcurl): libexecgate-fleet.a, linked by
#                    execgated, execgate-issue and the fleet tests, never
#                    into libexecgate
#   user/fleetd/*.c  the fleet's worker side in execgated (selections, key
#                    set, acks, the etcd threads): on core, the public API
#                    and the fleet layer; linked by execgated only
#   user/loader/*.c, user/loader/*/*.c kernel I/O, one room per job (tiers/,
#                    revokers/, maps/, records/, endpoints/, process/)
#   user/lib/*.c     the public worker handle (include/execgate/execgate.h)
#   user/execgate/   the loader CLI; user/issue/ the issuing CLI
#   user/daemon/     execgated, the worker service
#   tests/unit/      Criterion, no root; tests/kernel/ Criterion, root

.DELETE_ON_ERROR:
# BPF objects and skeletons are real products, not intermediates to delete.
.SECONDARY:
.SUFFIXES:

PREFIX ?= /usr/local
DESTDIR ?=
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
# The unit reads /etc/execgate/execgated.conf whatever the PREFIX.
SYSCONFDIR ?= /etc
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
VERSION := $(shell sed -n 's/^\#define EXECGATE_VERSION[ \t]*"\(.*\)"/\1/p' include/execgate/execgate.h)
# The soname's major number. It moves only on purpose, with an entry in
# docs/CHANGELOG.md; `make abi-check` fails on any ABI change until
# abi/libexecgate.abi is regenerated (`make abi-dump`, docs/api.md).
SOMAJOR := 1
FUZZ_SECONDS ?= 60
BUILD ?= build

CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

DEPS_STAMP := $(BUILD)/.deps-ok
WARN := -Wall -Wextra -Werror
CFLAGS ?= -O2 -g
# Every user object goes into libexecgate.so as well as the static archive.
PIC := -fPIC
# bpf/ is the include root of the kernel layout (bpf/abi/*.h, spelled
# "abi/abi.h"): never installed, and left off the front ends' command line
# (scripts/make/layers.mk), so that a front end that reaches it, directly or
# through a header of the library, does not compile.
KABI_CPPFLAGS = -Ibpf
CPPFLAGS += -Iinclude -Iuser -I$(BUILD)/include $(KABI_CPPFLAGS) -D_GNU_SOURCE
# jansson: the library builds the JSON of --json and of the API (user/lib/json.h).
LDLIBS := -lbpf -lelf -lz -lsodium -ljansson -lpthread
DAEMON_LDLIBS := -lmicrohttpd -lsystemd
# libcurl only where libexecgate-fleet.a is linked, never into libexecgate.
FLEET_LDLIBS := -lcurl -ljansson -lsodium
# The test programs link Criterion statically, with tests/criterion_git.c
# in place of libgit2: Criterion execs the test program afresh for every
# case, and libcriterion.so brings 16 more shared libraries to each of
# those starts, which the VM matrix's emulated CPU pays for with seconds a
# case (docs/bench/2026-12-07-criterion-static.md). nanopb's archive is
# libnanopb-dev's, the version Debian's Criterion is built with.
# tests/criterion_timeout.c scales every case's timeout by
# EXECGATE_TEST_TIMEOUT_SCALE (the VM guests of make check set it).
CRITERION_LIBS := tests/criterion_git.c tests/criterion_timeout.c -Wl,-Bstatic -lcriterion -lboxfort -lprotobuf-nanopb \
	-Wl,-Bdynamic -lffi -lnanomsg -lm -ldl
CRITERION_PROGS = $(addprefix $(BUILD)/,test-unit test-unit-san test-kernel test-daemon test-fleet \
	test-fleet-san)

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(BUILD)/include/%.skel.h,$(BPF_SRCS))

CORE_SRCS := $(wildcard user/core/*.c)
CLIENT_SRCS := $(wildcard user/client/*.c)
FLEET_SRCS := $(wildcard user/fleet/*.c)
FRONTEND_SRCS := $(wildcard user/frontend/*.c)
LOADER_SRCS := $(wildcard user/loader/*.c user/loader/*/*.c)
WORKER_SRCS := $(wildcard user/lib/*.c)
CORE_OBJS := $(patsubst user/%.c,$(BUILD)/obj/%.o,$(CORE_SRCS))
CLIENT_OBJS := $(patsubst user/%.c,$(BUILD)/obj/%.o,$(CLIENT_SRCS))
FLEET_OBJS := $(patsubst user/%.c,$(BUILD)/obj/%.o,$(FLEET_SRCS))
FRONTEND_OBJS := $(patsubst user/%.c,$(BUILD)/obj/%.o,$(FRONTEND_SRCS))
LOADER_OBJS := $(patsubst user/%.c,$(BUILD)/obj/%.o,$(LOADER_SRCS))
WORKER_OBJS := $(patsubst user/%.c,$(BUILD)/obj/%.o,$(WORKER_SRCS))
DAEMON_OBJS := $(patsubst user/%.c,$(BUILD)/obj/%.o,$(wildcard user/daemon/*.c))
FLEETD_OBJS := $(patsubst user/%.c,$(BUILD)/obj/%.o,$(wildcard user/fleetd/*.c))
EXECGATE_OBJS := $(patsubst user/%.c,$(BUILD)/obj/%.o,$(wildcard user/execgate/*.c))
ISSUE_OBJS := $(patsubst user/%.c,$(BUILD)/obj/%.o,$(wildcard user/issue/*.c))
UNIT_SRCS := $(wildcard tests/unit/*.c)
# tests/unit/test_version.c: the library's eg_version() (no skeletons in it),
# the soname's major and the changelog it compares the header with;
# tests/unit/test_backoff.c: the fleet's retry back-off (pure, no libcurl).
UNIT_LIB_SRCS := user/lib/version.c user/fleet/backoff.c
UNIT_DEFS := -DEG_TEST_SOMAJOR=$(SOMAJOR) -DEG_TEST_CHANGELOG='"$(CURDIR)/docs/CHANGELOG.md"'
KTEST_SRCS := $(wildcard tests/kernel/*.c)
BENCH_SRCS := $(wildcard tests/bench/bench_*.c)

CORE_LIB := $(BUILD)/libexecgate-core.a
CLIENT_LIB := $(BUILD)/libexecgate-client.a
FLEET_LIB := $(BUILD)/libexecgate-fleet.a
LIB := $(BUILD)/libexecgate.a
SOLIB := $(BUILD)/libexecgate.so.$(VERSION)
PCFILE := $(BUILD)/execgate.pc
# The installed API: every header of include/execgate/. The kernel layout
# (bpf/abi/abi.h, the maps' keys and values, and the *_abi.h beside it) is
# internal: it lives under bpf/, which nothing installs.
PUBLIC_HEADERS := $(sort $(wildcard include/execgate/*.h))
BINS := $(BUILD)/execgate $(BUILD)/execgate-issue $(if $(DAEMON_OBJS),$(BUILD)/execgated)

.PHONY: all deps check test-cli test-unit test-unit-san test-kernel vmtest bench fuzz \
	fuzz-smoke demo install format format-check clean

all: $(BINS) $(LIB) $(SOLIB) $(PCFILE) $(CORE_LIB) $(CLIENT_LIB) $(FLEET_LIB)

deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/setup-deps.sh
	@mkdir -p $(@D)
	./scripts/setup-deps.sh
	@touch $@

# --- BPF ---------------------------------------------------------------------
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h bpf/abi/*.h) $(wildcard include/execgate/*.h) vmlinux/vmlinux.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux -Iinclude -Ibpf \
		-Wall -Werror -c $< -o $@

$(BUILD)/include/%.skel.h: $(BUILD)/bpf/%.bpf.o
	@mkdir -p $(@D)
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*) > $@

# --- userspace ---------------------------------------------------------------
# The pure core never includes a skeleton, so it builds (and its unit tests
# run) without clang -target bpf.
$(BUILD)/obj/core/%.o: user/core/%.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PIC) $(WARN) -MMD -MP -c $< -o $@

# The front ends' own plumbing: no skeletons either.
$(BUILD)/obj/frontend/%.o: user/frontend/%.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PIC) $(WARN) -MMD -MP -c $< -o $@

# So is the client side: core and libsodium only.
$(BUILD)/obj/client/%.o: user/client/%.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PIC) $(WARN) -MMD -MP -c $< -o $@

# The etcd client: libcurl, jansson, libsodium's base64; no skeletons.
$(BUILD)/obj/fleet/%.o: user/fleet/%.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PIC) $(WARN) -MMD -MP -c $< -o $@

# The issuing tool is core-only as well: no skeletons, no libbpf.
$(BUILD)/obj/issue/%.o: user/issue/%.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PIC) $(WARN) -MMD -MP -c $< -o $@

$(BUILD)/obj/%.o: user/%.c $(SKELS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PIC) $(WARN) -MMD -MP -c $< -o $@

$(CORE_LIB): $(CORE_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	ar rcs $@ $^

# libexecgate-client.a: what a front end links beside the core (the demo,
# the tests); not part of libexecgate.
$(CLIENT_LIB): $(CLIENT_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	ar rcs $@ $^

# libexecgate-fleet.a: the etcd client (user/fleet/etcd.h); whatever links
# it adds $(FLEET_LDLIBS).
$(FLEET_LIB): $(FLEET_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	ar rcs $@ $^

# libexecgate.a: core + kernel I/O + the worker handle. The front ends link
# it statically; libexecgate.so exports only the public API
# (user/lib/libexecgate.map), for integrators.
$(LIB): $(CORE_OBJS) $(LOADER_OBJS) $(WORKER_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	ar rcs $@ $^

$(SOLIB): $(CORE_OBJS) $(LOADER_OBJS) $(WORKER_OBJS) user/lib/libexecgate.map
	$(CC) -shared -Wl,-soname,libexecgate.so.$(SOMAJOR) -Wl,--version-script=user/lib/libexecgate.map \
		-Wl,--no-undefined $(CFLAGS) $(LDFLAGS) -o $@ $(CORE_OBJS) $(LOADER_OBJS) $(WORKER_OBJS) $(LDLIBS)
	ln -sf $(@F) $(BUILD)/libexecgate.so.$(SOMAJOR)
	ln -sf libexecgate.so.$(SOMAJOR) $(BUILD)/libexecgate.so

# The .pc names the install paths, so it is written by install (for the
# PREFIX given there); $(PCFILE) is the default-prefix copy for inspection.
PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' user/lib/execgate.pc.in
$(PCFILE): user/lib/execgate.pc.in include/execgate/execgate.h Makefile
	@mkdir -p $(@D)
	$(PC_SED) > $@

$(BUILD)/execgate: $(EXECGATE_OBJS) $(FRONTEND_OBJS) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/execgated: $(DAEMON_OBJS) $(FLEETD_OBJS) $(FRONTEND_OBJS) $(FLEET_LIB) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(DAEMON_LDLIBS) $(FLEET_LDLIBS)

$(BUILD)/execgate-issue: $(ISSUE_OBJS) $(FRONTEND_OBJS) $(FLEET_LIB) $(CORE_LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(FLEET_LDLIBS)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# --- tests -------------------------------------------------------------------
# Unit tests cover the pure core, the front ends' plumbing and the client
# side: no root, no BPF.
$(BUILD)/test-unit: $(UNIT_SRCS) $(UNIT_LIB_SRCS) $(FRONTEND_OBJS) $(CLIENT_LIB) $(CORE_LIB) $(wildcard tests/unit/*.h) | $(DEPS_STAMP)
	$(CC) $(CPPFLAGS) $(UNIT_DEFS) -Itests $(CFLAGS) $(WARN) -o $@ $(UNIT_SRCS) $(UNIT_LIB_SRCS) $(FRONTEND_OBJS) $(CLIENT_LIB) $(CORE_LIB) $(CRITERION_LIBS) -ljansson -lsodium

# Pure core + unit tests again under ASan/UBSan; built separately so that the
# sanitizer runtime never reaches the installed binaries.
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
$(BUILD)/test-unit-san: $(UNIT_SRCS) $(UNIT_LIB_SRCS) $(FRONTEND_SRCS) $(CLIENT_SRCS) $(CORE_SRCS) $(wildcard tests/unit/*.h) | $(DEPS_STAMP)
	$(CLANG) $(CPPFLAGS) $(UNIT_DEFS) -Itests $(SAN_FLAGS) $(WARN) -o $@ $(UNIT_SRCS) $(UNIT_LIB_SRCS) $(FRONTEND_SRCS) $(CLIENT_SRCS) $(CORE_SRCS) $(CRITERION_LIBS) -ljansson -lsodium

$(BUILD)/test-kernel: $(KTEST_SRCS) $(CLIENT_LIB) $(LIB) $(wildcard tests/kernel/*.h) $(BINS) | $(DEPS_STAMP)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS) $(WARN) -o $@ $(KTEST_SRCS) $(CLIENT_LIB) $(LIB) $(CRITERION_LIBS) $(LDLIBS)

$(BUILD)/fuzz-admission: tests/fuzz/fuzz_admission.c tests/fuzz/fuzz.h $(CORE_SRCS) | $(DEPS_STAMP)
	$(CLANG) $(CPPFLAGS) -O1 -g -fsanitize=fuzzer,address,undefined $(WARN) -o $@ $< $(CORE_SRCS) -lsodium

$(BUILD)/bench-admission: tests/bench/bench_admission.c $(CORE_LIB) | $(DEPS_STAMP)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS) $(WARN) -o $@ $< $(CORE_LIB) -lsodium -lm

# bench-daemon measures execgated beside a bare Unix-socket server (unix_echo.c).
$(BUILD)/bench-daemon: tests/bench/bench_daemon.c tests/bench/unix_echo.c tests/bench/unix_echo.h $(LIB) | $(DEPS_STAMP)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS) $(WARN) -o $@ tests/bench/bench_daemon.c tests/bench/unix_echo.c $(LIB) $(LDLIBS) -lm

$(BUILD)/bench-%: tests/bench/bench_%.c $(LIB) | $(DEPS_STAMP)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS) $(WARN) -o $@ $< $(LIB) $(LDLIBS) -lm

# The public Ed25519 vectors are part of the repository (tests/vectors/):
# nothing a test reads lives outside the clone.
export EXECGATE_VECTORS_DIR ?= $(CURDIR)/tests/vectors

test-unit: $(BUILD)/test-unit
	$(BUILD)/test-unit --jobs 1

test-unit-san: $(BUILD)/test-unit-san
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(BUILD)/test-unit-san --jobs 1

# What the host kernel must give (tests/kernel/not_offered.h): a test that
# needs more ends with a loud SKIPPED line here and runs in the VM matrix
# (vmtest fails any test that ran on no kernel); a test that needs the
# declared tier and cannot have it fails.
HOST_TIER ?= cgroup
# Each suite logs the JSON its tests receive for test-schema
# (scripts/make/schema.mk), afresh on every run.
JSON_LOG_DIR := $(BUILD)/json-log
test-kernel: $(BUILD)/test-kernel $(BINS)
	@mkdir -p $(JSON_LOG_DIR) && rm -f $(JSON_LOG_DIR)/kernel.jsonl
	EXECGATE_EXPECT_TIER=$(HOST_TIER) EXECGATE_JSON_LOG=$(CURDIR)/$(JSON_LOG_DIR)/kernel.jsonl \
	EXECGATE_BIN=$(CURDIR)/$(BUILD)/execgate EXECGATE_ISSUE_BIN=$(CURDIR)/$(BUILD)/execgate-issue \
		$(BUILD)/test-kernel --jobs 1 --json=$(BUILD)/test-kernel-host.json || \
		{ ./scripts/ktest-failures.sh $(BUILD)/test-kernel-host.json; exit 1; }

# The VM tools and kernels (scripts/setup-vm-deps.sh, idempotent: one dpkg
# query when everything is there). Every target that boots a VM needs it.
.PHONY: vm-deps
vm-deps: | $(DEPS_STAMP)
	./scripts/setup-vm-deps.sh >/dev/null

vmtest: $(BUILD)/test-kernel $(BINS) | vm-deps
	BUILD=$(BUILD) ./scripts/vmtest.sh

# The guarantee matrix over the last vmtest's results and test-kernel's
# (make check judges it once both have run).
.PHONY: vmtest-judge
vmtest-judge: | vm-deps
	BUILD=$(BUILD) ./scripts/vmtest.sh judge

# make test-setup: the two set-up scripts in a fresh Debian 12 root, and
# every program the checks call resolves there (scripts/test-setup.sh).
.PHONY: test-setup
test-setup: | $(DEPS_STAMP)
	./scripts/test-setup.sh

fuzz: $(BUILD)/fuzz-admission
	@mkdir -p $(BUILD)/fuzz-corpus
	$(BUILD)/fuzz-admission -max_total_time=$(FUZZ_SECONDS) -max_len=512 \
		$(BUILD)/fuzz-corpus tests/fuzz/corpus

# The smoke keeps libFuzzer's chatter in a log; on failure the log is shown.
fuzz-smoke: $(BUILD)/fuzz-admission
	@mkdir -p $(BUILD)/fuzz-corpus
	@$(BUILD)/fuzz-admission -max_total_time=10 -max_len=512 $(BUILD)/fuzz-corpus \
		tests/fuzz/corpus >$(BUILD)/fuzz-smoke.log 2>&1 || { cat $(BUILD)/fuzz-smoke.log; exit 1; }
	@grep -E '^Done [0-9]+ runs' $(BUILD)/fuzz-smoke.log | sed 's/^/fuzz-smoke: /'

bench: $(BINS) $(patsubst tests/bench/bench_%.c,$(BUILD)/bench-%,$(BENCH_SRCS))
	./scripts/bench.sh

demo: $(BINS)
	./scripts/demo.sh

# The capability demo checks its own verdicts, so it doubles as the CLI test.
test-cli: $(BINS)
	BUILD=$(BUILD) ./scripts/demo-capability.sh >/dev/null

# Each part of the project that brings its own targets keeps them in
# scripts/make/<part>.mk and appends its test targets to CHECK_EXTRA.
# CHECK_BUILD_EXTRA: the binaries those targets run, built by check-build.
CHECK_EXTRA :=
CHECK_BUILD_EXTRA :=
include $(sort $(wildcard scripts/make/*.mk))

$(CRITERION_PROGS): tests/criterion_git.c tests/criterion_timeout.c

# make check runs scripts/check.sh: everything is built once (check-build),
# then four lanes side by side: the kernel matrix (vm), the system test
# (vm2), and the host stages in two lanes (host, host2) split so that the
# two long suites that mostly wait on processes, test-kernel and
# test-daemon, run beside each other. A failed
# stage does not stop the others; check fails when any failed. Then the
# stages that read what several lanes left: test-schema's check
# (json-schema-check, after both suites) and the VM guarantee matrix, whose
# host column is test-kernel's results (vmtest-judge). A table of each
# stage's time ends it.
CHECK_VM := vmtest
CHECK_VM2 := $(filter test-system,$(CHECK_EXTRA))
CHECK_HOST2 := $(filter test-daemon test-fleet-cli test-fleet test-fence soak-fleet-quick,$(CHECK_EXTRA))
CHECK_HOST := test-setup format-check abi-check test-abi test-unit test-unit-san test-cli fuzz-smoke \
	test-kernel $(filter-out $(CHECK_VM) $(CHECK_VM2) $(CHECK_HOST2) test-schema,$(CHECK_EXTRA))
CHECK_FINAL := $(if $(filter test-schema,$(CHECK_EXTRA)),json-schema-check)

.PHONY: check-build check-quick
check-build: all $(BUILD)/test-unit $(BUILD)/test-unit-san $(BUILD)/test-kernel \
	$(BUILD)/fuzz-admission $(CHECK_BUILD_EXTRA)

check: | $(DEPS_STAMP)
	CHECK_HOST='$(CHECK_HOST)' CHECK_HOST2='$(CHECK_HOST2)' CHECK_VM='$(CHECK_VM)' \
		CHECK_VM2='$(CHECK_VM2)' \
		CHECK_FINAL='$(CHECK_FINAL)' BUILD='$(BUILD)' MAKE='$(MAKE)' ./scripts/check.sh

# The inner loop while working (not what CI runs): unit, sanitizer unit and
# host kernel suites beside the daemon suite; no VM, no soak.
check-quick: | $(DEPS_STAMP)
	BUILD='$(BUILD)' MAKE='$(MAKE)' ./scripts/check.sh --quick

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/execgate
	install -m 0755 $(BINS) $(DESTDIR)$(PREFIX)/bin/
	install -m 0644 $(LIB) $(DESTDIR)$(LIBDIR)/
	install -m 0755 $(SOLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(SOLIB)) $(DESTDIR)$(LIBDIR)/libexecgate.so.$(SOMAJOR)
	ln -sf libexecgate.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/libexecgate.so
	install -m 0644 $(PUBLIC_HEADERS) $(DESTDIR)$(INCLUDEDIR)/execgate/
	$(PC_SED) > $(DESTDIR)$(LIBDIR)/pkgconfig/execgate.pc

FORMAT_SRCS = $(shell git ls-files '*.c' '*.h' | grep -v '^vmlinux/')
format:
	clang-format -i $(FORMAT_SRCS)

format-check: | $(DEPS_STAMP)
	clang-format --dry-run --Werror $(FORMAT_SRCS)

clean:
	rm -rf $(BUILD)
