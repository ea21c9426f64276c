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

# The fleet soak (tests/soak-fleet/, docs/design.md "The fleet soak"): a 3-member etcd
# cluster on loopback, 6 execgated workers with bridges and stand-in VMMs,
# the soak as control plane and front end, under etcd member kills, a
# daemon kill -9, a worker cut off etcd for 30 s, compactions and forged
# documents. Root, host kernel (cgroup tier). `soak-fleet` runs 300 s a
# phase; `soak-fleet-quick` 8 s a phase (the cut keeps its 30 s).
SOAK_FLEET_SRCS := $(wildcard tests/soak-fleet/*.c) tests/fleet/etcd_env.c tests/soak/common.c

.PHONY: soak-fleet soak-fleet-quick

$(BUILD)/soak-fleet: $(SOAK_FLEET_SRCS) $(wildcard tests/soak-fleet/*.h tests/fleet/*.h) $(FLEET_LIB) $(CLIENT_LIB) $(LIB) | $(DEPS_STAMP)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS) $(WARN) -o $@ $(SOAK_FLEET_SRCS) $(FLEET_LIB) \
		$(CLIENT_LIB) $(LIB) $(LDLIBS) $(FLEET_LDLIBS) -lpthread -lm

soak-fleet: $(BUILD)/soak-fleet $(BINS) $(BUILD)/execgate-bridge $(BUILD)/execgate-demo
	$(BUILD)/soak-fleet --bin $(CURDIR)/$(BUILD)

soak-fleet-quick: $(BUILD)/soak-fleet $(BINS) $(BUILD)/execgate-bridge $(BUILD)/execgate-demo
	$(BUILD)/soak-fleet --bin $(CURDIR)/$(BUILD) --quick

# In `make check` since its quick run passed three times in a row on the
# shared 2-core host (docs/bench/2026-12-03-soak-fleet.md).
CHECK_EXTRA += soak-fleet-quick
CHECK_BUILD_EXTRA += $(BUILD)/soak $(BUILD)/soak-fleet

# The fleet at scale (tests/soak-fleet-scale/, issue 39): hollow workers
# (user/fleetd/hollow.h) in one process against a 3-member etcd with mTLS
# and auth, with three real execgated instances beside them
# (tests/soak-fleet-scale/real.h: root, for their BPF programs and
# cgroups; --real 0 runs without them, and without root), placement then
# six phases of moves and faults, one table per phase. Not in `make check`:
# heavy, and bounded to 20 minutes by its own flags. SCALE_FLAGS scales it
# down, e.g.
#   make soak-fleet-scale SCALE_FLAGS='--workers 100 --sandboxes 10000 --phase-seconds 60'
SCALE_FLAGS ?=
SOAK_SCALE_SRCS := tests/soak-fleet-scale/main.c tests/soak-fleet-scale/real.c tests/fleet/etcd_env.c tests/fleet/etcd_metrics.c tests/soak/common.c

.PHONY: soak-fleet-scale
$(BUILD)/soak-fleet-scale: $(SOAK_SCALE_SRCS) $(wildcard tests/fleet/*.h tests/soak-fleet-scale/*.h user/fleetd/*.h) $(FLEETD_OBJS) $(FLEET_LIB) $(LIB) | $(DEPS_STAMP)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS) $(WARN) -o $@ $(SOAK_SCALE_SRCS) $(FLEETD_OBJS) \
		$(FLEET_LIB) $(LIB) $(LDLIBS) $(FLEET_LDLIBS) -lpthread -lm

soak-fleet-scale: $(BUILD)/soak-fleet-scale $(BUILD)/execgate-issue $(BUILD)/execgated
	timeout --kill-after=30 1200 $(BUILD)/soak-fleet-scale --bin $(CURDIR)/$(BUILD) $(SCALE_FLAGS)

# Not run by make check, but built by it, so that a change that breaks it
# fails there and not at the next scale run.
CHECK_BUILD_EXTRA += $(BUILD)/soak-fleet-scale
