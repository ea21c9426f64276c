# Key files (core/key_file.h): the CLI test through the real binaries and a
# libFuzzer smoke of the decoder. Included by the Makefile; $(BUILD),
# $(CORE_SRCS), $(CPPFLAGS), $(WARN), $(BINS) and $(DEPS_STAMP) are defined
# by then.

.PHONY: test-keys-cli fuzz-key-file fuzz-key-file-smoke

# No root: everything happens under a temporary directory.
test-keys-cli: $(BINS)
	BUILD=$(BUILD) ./scripts/test-keys-cli.sh

$(BUILD)/fuzz-key-file: tests/fuzz/fuzz_key_file.c tests/fuzz/fuzz.h $(CORE_SRCS) | $(DEPS_STAMP)
	$(CLANG) $(CPPFLAGS) -O1 -g -fsanitize=fuzzer,address,undefined $(WARN) -o $@ $< $(CORE_SRCS) -lsodium

fuzz-key-file: $(BUILD)/fuzz-key-file
	@mkdir -p $(BUILD)/fuzz-key-file-corpus
	$(BUILD)/fuzz-key-file -max_total_time=$(FUZZ_SECONDS) -max_len=256 \
		$(BUILD)/fuzz-key-file-corpus tests/fuzz/key-file-corpus

fuzz-key-file-smoke: $(BUILD)/fuzz-key-file
	@mkdir -p $(BUILD)/fuzz-key-file-corpus
	@$(BUILD)/fuzz-key-file -max_total_time=10 -max_len=256 $(BUILD)/fuzz-key-file-corpus \
		tests/fuzz/key-file-corpus >$(BUILD)/fuzz-key-file.log 2>&1 || { cat $(BUILD)/fuzz-key-file.log; exit 1; }
	@grep -E '^Done [0-9]+ runs' $(BUILD)/fuzz-key-file.log | sed 's/^/fuzz-key-file-smoke: /'

CHECK_EXTRA += test-keys-cli fuzz-key-file-smoke
CHECK_BUILD_EXTRA += $(BUILD)/fuzz-key-file
