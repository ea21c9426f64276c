# The fleet's signed documents (docs/fleet.md): the CLI test through the
# real execgate-issue and a libFuzzer smoke of both decoders. Included by
# the Makefile; $(BUILD), $(BINS), $(CORE_SRCS), $(CPPFLAGS), $(WARN) and
# $(DEPS_STAMP) are defined by then.

.PHONY: test-fleet-cli

# No root: everything happens under a temporary directory.
test-fleet-cli: $(BINS)
	BUILD=$(BUILD) ./scripts/test-fleet-cli.sh

CHECK_EXTRA += test-fleet-cli

# libFuzzer over both decoders and their text readers (tests/fuzz/fuzz_fleet.c).
.PHONY: fuzz-fleet fuzz-fleet-smoke
$(BUILD)/fuzz-fleet: tests/fuzz/fuzz_fleet.c tests/fuzz/fuzz.h $(CORE_SRCS) | $(DEPS_STAMP)
	$(CLANG) $(CPPFLAGS) -O1 -g -fsanitize=fuzzer,address,undefined $(WARN) -o $@ $< $(CORE_SRCS) -lsodium

fuzz-fleet: $(BUILD)/fuzz-fleet
	@mkdir -p $(BUILD)/fuzz-fleet-corpus
	$(BUILD)/fuzz-fleet -max_total_time=$(FUZZ_SECONDS) -max_len=4096 $(BUILD)/fuzz-fleet-corpus \
		tests/fuzz/fleet-corpus

fuzz-fleet-smoke: $(BUILD)/fuzz-fleet
	@mkdir -p $(BUILD)/fuzz-fleet-corpus
	@$(BUILD)/fuzz-fleet -max_total_time=10 -max_len=4096 $(BUILD)/fuzz-fleet-corpus \
		tests/fuzz/fleet-corpus >$(BUILD)/fuzz-fleet.log 2>&1 || { cat $(BUILD)/fuzz-fleet.log; exit 1; }
	@grep -E '^Done [0-9]+ runs' $(BUILD)/fuzz-fleet.log | sed 's/^/fuzz-fleet-smoke: /'

CHECK_EXTRA += fuzz-fleet-smoke

# The etcd client (user/fleet/etcd.h) against a real etcd cluster started
# by tests/fleet/etcd_env.c (loopback ports, a temporary directory), and
# its refusals against a canned HTTP server. No root needed; no etcd
# binary fails the run.
# The one gate for a test that cannot run (tests/kernel/not_offered.h).
FLEET_TEST_SRCS := $(wildcard tests/fleet/*.c) tests/kernel/not_offered.c
.PHONY: test-fleet
$(BUILD)/test-fleet: $(FLEET_TEST_SRCS) $(wildcard tests/fleet/*.h) $(FLEET_LIB) | $(DEPS_STAMP)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS) $(WARN) -o $@ $(FLEET_TEST_SRCS) $(FLEET_LIB) \
		$(CRITERION_LIBS) -lpthread $(FLEET_LDLIBS)

test-fleet: $(BUILD)/test-fleet
	$(BUILD)/test-fleet --jobs 1

CHECK_EXTRA += test-fleet

# The same under ASan, UBSan and LeakSanitizer: the client parses what the
# network sends.
.PHONY: test-fleet-san
$(BUILD)/test-fleet-san: $(FLEET_TEST_SRCS) $(wildcard tests/fleet/*.h) $(FLEET_SRCS) \
		$(wildcard user/fleet/*.h) | $(DEPS_STAMP)
	$(CLANG) $(CPPFLAGS) -Itests $(SAN_FLAGS) $(WARN) -o $@ $(FLEET_TEST_SRCS) $(FLEET_SRCS) \
		$(CRITERION_LIBS) -lpthread $(FLEET_LDLIBS)

test-fleet-san: $(BUILD)/test-fleet-san
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(BUILD)/test-fleet-san --jobs 1

CHECK_EXTRA += test-fleet-san

# execgate-issue fence against a real single-member etcd (scripts/test-fence.sh).
.PHONY: test-fence
test-fence: $(BINS)
	BUILD=$(BUILD) ./scripts/test-fence.sh

CHECK_EXTRA += test-fence

# libFuzzer over the watch stream scanner and parser and the ack reader
# (tests/fuzz/fuzz_etcd.c).
.PHONY: fuzz-etcd fuzz-etcd-smoke
$(BUILD)/fuzz-etcd: tests/fuzz/fuzz_etcd.c tests/fuzz/fuzz.h $(FLEET_SRCS) $(wildcard user/fleet/*.h) | $(DEPS_STAMP)
	$(CLANG) $(CPPFLAGS) -O1 -g -fsanitize=fuzzer,address,undefined $(WARN) -o $@ $< \
		$(filter-out user/fleet/etcd_watch_read.c,$(FLEET_SRCS)) $(FLEET_LDLIBS)

fuzz-etcd: $(BUILD)/fuzz-etcd
	@mkdir -p $(BUILD)/fuzz-etcd-corpus
	$(BUILD)/fuzz-etcd -max_total_time=$(FUZZ_SECONDS) -max_len=4096 $(BUILD)/fuzz-etcd-corpus \
		tests/fuzz/etcd-corpus

fuzz-etcd-smoke: $(BUILD)/fuzz-etcd
	@mkdir -p $(BUILD)/fuzz-etcd-corpus
	@$(BUILD)/fuzz-etcd -max_total_time=10 -max_len=4096 $(BUILD)/fuzz-etcd-corpus \
		tests/fuzz/etcd-corpus >$(BUILD)/fuzz-etcd.log 2>&1 || { cat $(BUILD)/fuzz-etcd.log; exit 1; }
	@grep -E '^Done [0-9]+ runs' $(BUILD)/fuzz-etcd.log | sed 's/^/fuzz-etcd-smoke: /'

CHECK_EXTRA += fuzz-etcd-smoke
CHECK_BUILD_EXTRA += $(BUILD)/test-fleet $(BUILD)/test-fleet-san $(BUILD)/fuzz-fleet $(BUILD)/fuzz-etcd
