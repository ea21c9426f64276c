# Per-step builds of the connect_unix program, for bench-kernel's breakdown
# of the allowed and unregistered paths (bpf/execgate_common.bpf.h, enum
# eg_step): step N allows right after step N. Benchmark objects only; the
# loader never sees them.
EG_BENCH_STEPS := 1 2 3 4 5 6 7
EG_STEP_OBJS := $(foreach n,$(EG_BENCH_STEPS),$(BUILD)/bpf-steps/cgroup_connect_unix_step$(n).bpf.o)

$(BUILD)/bpf-steps/cgroup_connect_unix_step%.bpf.o: bpf/cgroup_connect_unix.bpf.c $(wildcard bpf/*.h) $(wildcard include/execgate/*.h) vmlinux/vmlinux.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -DEG_STOP_AFTER=$* -Ivmlinux -Iinclude -Ibpf \
		-Wall -Werror -c $< -o $@

# The whole program with its locked copies unlocked (-DEG_BENCH_UNLOCKED,
# bpf/execgate_common.bpf.h): what the lock pairs cost on the allowed path.
$(BUILD)/bpf-steps/cgroup_connect_unix_unlocked.bpf.o: bpf/cgroup_connect_unix.bpf.c $(wildcard bpf/*.h) $(wildcard include/execgate/*.h) vmlinux/vmlinux.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -DEG_BENCH_UNLOCKED -Ivmlinux -Iinclude -Ibpf \
		-Wall -Werror -c $< -o $@
EG_STEP_OBJS += $(BUILD)/bpf-steps/cgroup_connect_unix_unlocked.bpf.o

# The memory-touch probes (bpf/bench/connect_unix_touch.bpf.c), same place.
EG_BENCH_TOUCHES := 0 1 2 3 4 5 6 7 8 9 10
EG_TOUCH_OBJS := $(foreach n,$(EG_BENCH_TOUCHES),$(BUILD)/bpf-steps/connect_unix_touch$(n).bpf.o)

$(BUILD)/bpf-steps/connect_unix_touch%.bpf.o: bpf/bench/connect_unix_touch.bpf.c $(wildcard bpf/bench/*.h) $(wildcard include/execgate/*.h) vmlinux/vmlinux.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -DEG_TOUCH=$* -Ivmlinux -Iinclude -Ibpf \
		-Wall -Werror -c $< -o $@

# bench-kernel finds them beside itself, in bpf-steps/.
$(BUILD)/bench-kernel: $(EG_STEP_OBJS) $(EG_TOUCH_OBJS)

# The LSM tag probe (bpf/bench/lsm_tag_probe.bpf.c): bench-lsm's floor rows.
$(BUILD)/bpf-steps/lsm_tag_probe.bpf.o: bpf/bench/lsm_tag_probe.bpf.c $(wildcard bpf/bench/*.h) $(wildcard include/execgate/*.h) vmlinux/vmlinux.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux -Iinclude -Ibpf \
		-Wall -Werror -c $< -o $@

$(BUILD)/bench-lsm: $(BUILD)/bpf-steps/lsm_tag_probe.bpf.o
