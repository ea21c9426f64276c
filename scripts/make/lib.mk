# libexecgate as an integrator gets it: the example of docs/api.md built
# against the installed .pc and .so, run on the host kernel (root).
.PHONY: test-lib
test-lib: all
	rm -rf $(BUILD)/stage
	$(MAKE) --no-print-directory install BUILD=$(BUILD) DESTDIR=$(CURDIR)/$(BUILD)/stage PREFIX=/opt/execgate >/dev/null
	./tests/lib/installed_example.sh $(BUILD) $(BUILD)/stage
CHECK_EXTRA += test-lib
