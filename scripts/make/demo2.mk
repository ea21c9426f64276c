# The two-worker demo (scripts/demo-two-workers.sh) and its
# actors, execgate-demo (user/demo/: stand-in Firecracker and impostor,
# sandbox manager, route-cache front end, pid reuse). Not installed: not in
# BINS. Its objects come from the generic $(BUILD)/obj/%.o rule.

DEMO_OBJS := $(patsubst user/%.c,$(BUILD)/obj/%.o,$(wildcard user/demo/*.c))

$(BUILD)/execgate-demo: $(DEMO_OBJS) $(FRONTEND_OBJS) $(CLIENT_LIB) $(LIB)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# demo.sh runs the two-worker part with these; tests/kernel/test_two_workers.c
# runs execgate-demo beside $EXECGATE_BIN.
all: $(BUILD)/execgate-demo
demo: $(BUILD)/execgate-demo $(BUILD)/execgate-bridge
$(BUILD)/test-kernel test-kernel: $(BUILD)/execgate-demo
