# The soak (tests/soak/, docs/design.md "Soak"): install/retire/admit
# SIGKILLed at random points, connect storms on both cores under 1 000
# epoch flips a second, and the maps at capacity, every decision checked
# against a reference log. Host kernel (cgroup tier), root, a scratch
# cgroup and pin dir of its own. `soak` is the full run (1 000 kills, 60 s
# of storm); `soak-quick` (~60 s) runs in `make check`.
SOAK_SRCS := $(wildcard tests/soak/*.c)

.PHONY: soak soak-quick

$(BUILD)/soak: $(SOAK_SRCS) $(wildcard tests/soak/*.h) $(LIB) | $(DEPS_STAMP)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS) $(WARN) -o $@ $(SOAK_SRCS) $(LIB) $(LDLIBS)

soak: $(BUILD)/soak $(BINS)
	$(BUILD)/soak --bin $(CURDIR)/$(BUILD)

soak-quick: $(BUILD)/soak $(BINS)
	$(BUILD)/soak --bin $(CURDIR)/$(BUILD) --quick

CHECK_EXTRA += soak-quick
