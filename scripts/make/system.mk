# make test-system: the .deb under systemd as PID 1 in a TCG VM (Debian 12,
# the 6.12 kernel with BPF LSM), driven through the HTTP API
# (scripts/system-test.sh, tests/system/). Root. It builds its own .debs
# (two versions, for the upgrade) and caches the VM's root file system under
# ${XDG_CACHE_HOME:-$HOME/.cache}/execgate/. EXECGATE_SKIP_SYSTEM_TEST=1
# skips it, loudly.
.PHONY: test-system
test-system: | $(DEPS_STAMP) vm-deps
	BUILD=$(BUILD) ./scripts/system-test.sh

CHECK_EXTRA += test-system
