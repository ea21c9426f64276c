# execgated: its Criterion tests and its systemd unit. Included by the
# Makefile; $(BUILD), $(LIB), $(CPPFLAGS), $(CFLAGS), $(WARN), $(LDLIBS),
# $(BINS), $(DEPS_STAMP), $(SYSTEMDUNITDIR), $(SYSCONFDIR) and $(SYSUSERSDIR)
# are defined by then.
#
# tests/daemon/ drives a real execgated over its socket and reuses the
# kernel tests' harness (scratch cgroup, pins, keys, tokens, children).

# user/daemon/json.c too: test_json.c compares the verdict's two forms.
DAEMON_TEST_SRCS := $(wildcard tests/daemon/*.c) tests/kernel/harness.c tests/kernel/world_pool.c tests/kernel/not_offered.c \
	tests/kernel/json_log.c tests/kernel/stream_holder.c tests/kernel/restrict.c \
	tests/kernel/tcp_env.c user/daemon/json.c tests/fleet/etcd_env.c tests/fleet/fake_http.c

.PHONY: test-daemon install-daemon

# tests/daemon/test_fleet.c runs a real etcd (tests/fleet/etcd_env.c) and
# writes to it with the fleet's client; test_fleet_hollow.c runs the fleet's
# worker side itself (user/fleetd/), on the real backend and the hollow one.
$(BUILD)/test-daemon: $(DAEMON_TEST_SRCS) $(wildcard tests/daemon/*.h tests/kernel/*.h user/daemon/*.h tests/fleet/*.h) $(FLEETD_OBJS) $(LIB) $(FLEET_LIB) | $(DEPS_STAMP)
	$(CC) $(CPPFLAGS) -Itests -Itests/kernel $(CFLAGS) $(WARN) -o $@ $(DAEMON_TEST_SRCS) $(FLEETD_OBJS) $(FLEET_LIB) $(LIB) \
		$(CRITERION_LIBS) -ljansson $(LDLIBS) $(FLEET_LDLIBS)

# Root (scratch cgroups and pins). --jobs 1: each test starts its own
# daemon on its own pin dir, and the bad-client tests count fds.
# $(call test_daemon_run,CRITERION_ARGS,JSON_LOG): one run of the suite.
define test_daemon_run
	@mkdir -p $(JSON_LOG_DIR) && rm -f $(JSON_LOG_DIR)/$(2)
	EXECGATE_EXPECT_TIER=$(HOST_TIER) EXECGATED_BIN=$(CURDIR)/$(BUILD)/execgated \
	EXECGATE_JSON_LOG=$(CURDIR)/$(JSON_LOG_DIR)/$(2) \
	EXECGATE_BIN=$(CURDIR)/$(BUILD)/execgate EXECGATE_ISSUE_BIN=$(CURDIR)/$(BUILD)/execgate-issue \
	EXECGATE_UNIT=$(CURDIR)/deploy/systemd/execgated.service \
		$(BUILD)/test-daemon --jobs 1 $(1)
endef

test-daemon: $(BUILD)/test-daemon $(BINS)
	$(call test_daemon_run,,daemon.jsonl)

# make check-quick runs the suite in two halves side by side, in two
# Criterion runners (as test-kernel and test-daemon run side by side in
# make check: each runner keeps its own pool of worlds): the suites named
# here, and every other one. The two filters are each other's complement,
# so every case runs once. The fleet suites here (28 cases) took 173 s and
# the other 71 cases 151 s (docs/bench/2026-12-07-check-warm-xeon.md).
DAEMON_HALF_SUITES := daemon_fleet|daemon_fleet_tls|daemon_fleet_trust|fleet_hollow
.PHONY: test-daemon-half1 test-daemon-half2
test-daemon-half1: $(BUILD)/test-daemon $(BINS)
	$(call test_daemon_run,--filter '@($(DAEMON_HALF_SUITES))/*',daemon-half1.jsonl)
test-daemon-half2: $(BUILD)/test-daemon $(BINS)
	$(call test_daemon_run,--filter '!($(DAEMON_HALF_SUITES))/*',daemon-half2.jsonl)

CHECK_EXTRA += test-daemon

# The unit names the installed binary: ExecStart is rewritten to $(PREFIX)/bin.
# The groups the config names (sysusers.d; `systemd-sysusers` creates them)
# and /etc/execgate/execgated.conf come with it, so the unit can start once
# worker_id is set.
install: install-daemon
install-daemon: all
	install -d $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(PREFIX)/share/doc/execgate
	sed 's|/usr/local/bin/execgated|$(PREFIX)/bin/execgated|' deploy/systemd/execgated.service \
		> $(DESTDIR)$(SYSTEMDUNITDIR)/execgated.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/execgated.service
	install -m 0644 deploy/execgated.conf $(DESTDIR)$(PREFIX)/share/doc/execgate/execgated.conf.example
	@# The API reference the man pages point at.
	install -m 0644 docs/api.md $(DESTDIR)$(PREFIX)/share/doc/execgate/api.md
	install -d $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(SYSCONFDIR)/execgate
	install -m 0644 deploy/sysusers.d/execgate.conf $(DESTDIR)$(SYSUSERSDIR)/execgate.conf
	@# An operator's config is never overwritten; the example stays beside the docs.
	test -e $(DESTDIR)$(SYSCONFDIR)/execgate/execgated.conf || \
		install -m 0644 deploy/execgated.conf $(DESTDIR)$(SYSCONFDIR)/execgate/execgated.conf
CHECK_BUILD_EXTRA += $(BUILD)/test-daemon
