# Benchmark-only BPF programs live in bpf/bench/ and build into bpf-steps/,
# where the bench binaries find them beside themselves; the loader never
# sees them. Variants of a real program are a bench file that #defines,
# then #includes the real source: the enforcing programs carry no switches.
BENCH_BPF_CFLAGS = -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux -Iinclude -Ibpf -Wall -Werror
BENCH_BPF_DEPS = $(wildcard bpf/*.h bpf/abi/*.h) $(wildcard bpf/bench/*.h) $(wildcard include/execgate/*.h) vmlinux/vmlinux.h

# Per-step builds of the connect_unix program, for bench-kernel's breakdown
# of the allowed and unregistered paths (bpf/bench/cgroup_connect_unix_step.bpf.c,
# enum eg_step): step N allows right after step N; build 9 stops nowhere
# and misses the admission cache on every connect.
EG_BENCH_STEPS := 1 2 3 4 5 6 7 8 9
EG_STEP_OBJS := $(foreach n,$(EG_BENCH_STEPS),$(BUILD)/bpf-steps/cgroup_connect_unix_step$(n).bpf.o)

$(BUILD)/bpf-steps/cgroup_connect_unix_step%.bpf.o: bpf/bench/cgroup_connect_unix_step.bpf.c bpf/cgroup_connect_unix.bpf.c $(BENCH_BPF_DEPS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) $(BENCH_BPF_CFLAGS) -Wunused-macros -DEG_STOP_AFTER=$* -c $< -o $@

# The memory-touch probes (bpf/bench/connect_unix_touch.bpf.c), same place.
EG_BENCH_TOUCHES := 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18
EG_TOUCH_OBJS := $(foreach n,$(EG_BENCH_TOUCHES),$(BUILD)/bpf-steps/connect_unix_touch$(n).bpf.o)

$(BUILD)/bpf-steps/connect_unix_touch%.bpf.o: bpf/bench/connect_unix_touch.bpf.c $(BENCH_BPF_DEPS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) $(BENCH_BPF_CFLAGS) -DEG_TOUCH=$* -c $< -o $@

# bench-kernel finds them beside itself, in bpf-steps/.
$(BUILD)/bench-kernel: $(EG_STEP_OBJS) $(EG_TOUCH_OBJS)

# The LSM tag probe (bpf/bench/lsm_tag_probe.bpf.c): bench-lsm's floor rows.
$(BUILD)/bpf-steps/lsm_tag_probe.bpf.o: bpf/bench/lsm_tag_probe.bpf.c $(BENCH_BPF_DEPS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) $(BENCH_BPF_CFLAGS) -c $< -o $@

$(BUILD)/bench-lsm: $(BUILD)/bpf-steps/lsm_tag_probe.bpf.o

# The empty programs the benches measure beside the real ones
# (bpf/bench/*_empty.bpf.c), through skeletons in include/bench/. The
# loader's own empty connect_unix program is its probe, so it stays in bpf/.
$(BUILD)/bpf-steps/%_empty.bpf.o: bpf/bench/%_empty.bpf.c $(BENCH_BPF_DEPS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) $(BENCH_BPF_CFLAGS) -c $< -o $@

$(BUILD)/include/bench/%.skel.h: $(BUILD)/bpf-steps/%.bpf.o
	@mkdir -p $(@D)
	$(BPFTOOL) gen skeleton $< name $* > $@

$(BUILD)/bench-tcp: $(BUILD)/include/bench/cgroup_inet_empty.skel.h

# The TCP tag alone (bpf/bench/cgroup_inet_tag_probe.bpf.c): bench-tcp's
# floor row, through a skeleton as the empty program.
$(BUILD)/bpf-steps/cgroup_inet_tag_probe.bpf.o: bpf/bench/cgroup_inet_tag_probe.bpf.c $(BENCH_BPF_DEPS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) $(BENCH_BPF_CFLAGS) -c $< -o $@

$(BUILD)/bench-tcp: $(BUILD)/include/bench/cgroup_inet_tag_probe.skel.h
$(BUILD)/bench-lsm: $(BUILD)/include/bench/lsm_empty.skel.h

# Where bpf_get_socket_cookie() is offered (bpf/bench/cookie_probe.bpf.c):
# bench-cookie loads each of its programs alone.
$(BUILD)/bpf-steps/cookie_probe.bpf.o: bpf/bench/cookie_probe.bpf.c $(BENCH_BPF_DEPS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) $(BENCH_BPF_CFLAGS) -c $< -o $@

$(BUILD)/bench-cookie: $(BUILD)/bpf-steps/cookie_probe.bpf.o
