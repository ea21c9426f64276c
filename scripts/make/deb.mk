# `make deb`: the Debian packages (deploy/debian/, scripts/build-deb.sh):
# execgate, libexecgate1, libexecgate-dev in $(DEB_DIR), lintian clean.
# DEB_VERSION overrides the package version (default: the tree's, from
# include/execgate/execgate.h); make test-system builds a second set with a
# bumped one to test an upgrade.
DEB_VERSION ?= $(VERSION)
DEB_DIR ?= $(BUILD)/deb

.PHONY: deb
deb: | $(DEPS_STAMP)
	./scripts/build-deb.sh $(DEB_DIR) $(DEB_VERSION)
