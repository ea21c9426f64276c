# Operations: man pages (help2man), bash completion, deploy/kubernetes/.
# Included by the Makefile; $(BUILD), $(BINS), $(DAEMON_OBJS), $(VERSION),
# $(MANDIR) and $(BASHCOMPDIR) are defined by then.

MAN_DIR := $(BUILD)/man
# execgated(8) is built from the daemon binary's --help, so it exists once
# user/daemon/ has sources; until then test-ops says so out loud.
MAN_PAGES := $(MAN_DIR)/execgate.8 $(MAN_DIR)/execgate-issue.1 \
	$(if $(DAEMON_OBJS),$(MAN_DIR)/execgated.8) $(MAN_DIR)/execgate-bridge.8
# The page date is the last commit's, not the build's.
MAN_DATE = $(shell git log -1 --format=%ct 2>/dev/null || date +%s)
HELP2MAN = SOURCE_DATE_EPOCH=$(MAN_DATE) help2man --no-info

.PHONY: man install-man install-bash-completion test-ops exit-codes-doc

man: $(MAN_PAGES)

# Each page: help2man over the binary (title, version, date), the
# hand-written docs/man/<name>.h2m (NAME, DESCRIPTION, EXIT STATUS, FILES,
# SEE ALSO; a man page of its own, turned into help2man's include form by
# scripts/man-h2m.sh) and the binary's --help kept verbatim
# (scripts/man-fragment.sh: SYNOPSIS, COMMANDS or OPTIONS, and
# CONFIGURATION from --help-config where the binary has it).
$(MAN_DIR)/%.h2m: $(BUILD)/% scripts/man-fragment.sh | $(DEPS_STAMP)
	@mkdir -p $(@D)
	./scripts/man-fragment.sh $(BUILD)/$* > $@

$(MAN_DIR)/%.src.h2m: docs/man/%.h2m scripts/man-h2m.sh
	@mkdir -p $(@D)
	./scripts/man-h2m.sh $< > $@

MAN_SECTION_NAME = $(if $(filter %.1,$@),User Commands,System Administration)
define man_page
	$(HELP2MAN) --section $(subst .,,$(suffix $@)) --manual "$(MAN_SECTION_NAME)" \
		--include $(MAN_DIR)/$(basename $(@F)).src.h2m --include $(MAN_DIR)/$(basename $(@F)).h2m \
		--output $@ $(BUILD)/$(basename $(@F))
endef

$(MAN_DIR)/execgate.8: $(BUILD)/execgate $(MAN_DIR)/execgate.src.h2m $(MAN_DIR)/execgate.h2m
	$(man_page)

$(MAN_DIR)/execgate-issue.1: $(BUILD)/execgate-issue $(MAN_DIR)/execgate-issue.src.h2m $(MAN_DIR)/execgate-issue.h2m
	$(man_page)

$(MAN_DIR)/execgated.8: $(BUILD)/execgated $(MAN_DIR)/execgated.src.h2m $(MAN_DIR)/execgated.h2m
	$(man_page)

$(MAN_DIR)/execgate-bridge.8: $(BUILD)/execgate-bridge $(MAN_DIR)/execgate-bridge.src.h2m $(MAN_DIR)/execgate-bridge.h2m
	$(man_page)

# The exit-code tables of README.md, docs/operators.md and execgate(8), from
# the one table in user/execgate/exit_codes.c; test-ops fails until run.
exit-codes-doc: $(BUILD)/execgate
	./scripts/gen-exit-codes-doc.sh $(BUILD)

install: install-man install-bash-completion

install-man: $(MAN_PAGES)
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8
	install -m 0644 $(filter %.1,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(filter %.8,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man8/

# One file; bash-completion loads completions by command name, hence the
# links for the other two commands.
install-bash-completion:
	install -d $(DESTDIR)$(BASHCOMPDIR)
	install -m 0644 deploy/bash-completion/execgate $(DESTDIR)$(BASHCOMPDIR)/execgate
	ln -sf execgate $(DESTDIR)$(BASHCOMPDIR)/execgate-issue
	ln -sf execgate $(DESTDIR)$(BASHCOMPDIR)/execgated
	ln -sf execgate $(DESTDIR)$(BASHCOMPDIR)/execgate-bridge

# The daemon's own config parser, run on the config the Kubernetes
# entrypoint renders (tests/ops/test_kubernetes.py).
OPS_CONFIG_CHECK := $(if $(DAEMON_OBJS),$(BUILD)/ops-config-check)
# The parser is config.c (the keys) and config_load.c (the file). It uses
# libexecgate's public calls, so it links the library, and the etcd
# client's endpoint rule (eg_etcd_is_loopback_url), so the fleet's.
OPS_CONFIG_OBJS := $(BUILD)/obj/daemon/config.o $(BUILD)/obj/daemon/config_load.o
$(BUILD)/ops-config-check: tests/ops/config_check.c $(OPS_CONFIG_OBJS) $(LIB) $(FLEET_LIB)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $< $(OPS_CONFIG_OBJS) $(FLEET_LIB) \
		$(LIB) $(LDLIBS) $(FLEET_LDLIBS)

OPS_DESTDIR := $(CURDIR)/$(BUILD)/ops-destdir
test-ops: $(MAN_PAGES) $(BINS) $(OPS_CONFIG_CHECK) | $(DEPS_STAMP)
	@echo "test-ops: man pages"
	./tests/ops/man-lint.sh $(VERSION) $(MAN_PAGES)
	@echo "test-ops: man page sources render as pages of their own (man -l docs/man/*.h2m)"
	./tests/ops/man-lint.sh --source $(wildcard docs/man/*.h2m)
	@echo "test-ops: one option parser (exact names, --help/-h, --version/-V) in every program"
	./tests/ops/test-options.sh $(BUILD) $(VERSION)
	$(if $(DAEMON_OBJS),@echo "test-ops: configuration reference: docs/api.md and execgated(8) = execgated --help-config")
	$(if $(DAEMON_OBJS),./tests/ops/test-config-doc.sh $(BUILD))
	@echo "test-ops: exit codes: README.md, docs/operators.md, execgate(8) and --help = execgate --help-exit-codes"
	./tests/ops/test-exit-codes-doc.sh $(BUILD)
	@echo "test-ops: the static Criterion still shows a failed string assertion's diff, and EXECGATE_TEST_TIMEOUT_SCALE scales every case's timeout"
	./tests/ops/test-criterion-libs.sh $(CC) $(CRITERION_LIBS)
	@echo "test-ops: make check kills a stage at CHECK_STAGE_LIMIT, and every stage on a Ctrl-C or TERM"
	./tests/ops/test-check-stop.sh
	@echo "test-ops: every command line in the docs uses flags the programs have"
	python3 ./tests/ops/test_doc_flags.py $(BUILD)
	$(if $(DAEMON_OBJS),,@echo "test-ops: NOT TESTED: execgated(8): user/daemon/ has no sources, so no execgated to run help2man on")
	@echo "test-ops: install-man, install-bash-completion into $(OPS_DESTDIR)"
	rm -rf $(OPS_DESTDIR)
	$(MAKE) --no-print-directory BUILD=$(BUILD) DESTDIR=$(OPS_DESTDIR) PREFIX=/usr install-man install-bash-completion >/dev/null
	./tests/ops/man-lint.sh $(VERSION) $(addprefix $(OPS_DESTDIR)/usr/share/man/,$(join $(patsubst .%,man%/,$(suffix $(MAN_PAGES))),$(notdir $(MAN_PAGES))))
	test -f $(OPS_DESTDIR)/usr/share/bash-completion/completions/execgate
	test "$$(readlink $(OPS_DESTDIR)/usr/share/bash-completion/completions/execgate-issue)" = execgate
	test "$$(readlink $(OPS_DESTDIR)/usr/share/bash-completion/completions/execgated)" = execgate
	@echo "test-ops: the API reference the man pages name is installed there"
	$(MAKE) --no-print-directory BUILD=$(BUILD) DESTDIR=$(OPS_DESTDIR) PREFIX=/usr install-daemon >/dev/null
	cmp docs/api.md $(OPS_DESTDIR)/usr/share/doc/execgate/api.md
	for m in execgate.8 execgated.8; do \
		MANWIDTH=200 man -l $(OPS_DESTDIR)/usr/share/man/man8/$$m 2>/dev/null | \
			grep -q '/usr/share/doc/execgate/api\.md' || { echo "$$m: names no /usr/share/doc/execgate/api.md"; exit 1; }; \
	done
	@echo "test-ops: bash completion"
	bash ./tests/ops/test-completion.sh $(BUILD)
	@echo "test-ops: deploy/kubernetes"
	python3 ./tests/ops/test_kubernetes.py $(CURDIR) $(BUILD)/ops-k8s $(OPS_CONFIG_CHECK)

CHECK_EXTRA += test-ops
CHECK_BUILD_EXTRA += $(MAN_PAGES) $(OPS_CONFIG_CHECK)
