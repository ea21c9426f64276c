# execgate-bridge, the reference host bridge (user/bridge/, docs/operators.md).
# Included by the Makefile; $(BUILD), $(LIB), $(CFLAGS), $(LDLIBS), $(BINS)
# are defined by then. Its objects come from the generic $(BUILD)/obj/%.o
# rule; it links libexecgate.a like the other front ends.

BRIDGE_OBJS := $(patsubst user/%.c,$(BUILD)/obj/%.o,$(wildcard user/bridge/*.c))

$(BUILD)/execgate-bridge: $(BRIDGE_OBJS) $(FRONTEND_OBJS) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# BINS is installed by `make install` (its recipe reads BINS when it runs);
# all and the kernel tests read it earlier, at parse time, so they are told
# here. tests/kernel/test_bridge.c runs the binary beside $EXECGATE_BIN.
BINS += $(BUILD)/execgate-bridge
all: $(BUILD)/execgate-bridge
$(BUILD)/test-kernel test-kernel: $(BUILD)/execgate-bridge
